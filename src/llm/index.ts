/**
 * `src/llm/`: the LLM provider port. KnowHub's learning features (semantic routing, evolve,
 * LLM slimming, extraction, compaction) talk to an OpenAI-compatible chat model through
 * this interface; the composition root (src/app/) builds the provider from the `llm`
 * config and hands it to the services. Every feature that needs one answers
 * `llm_not_configured` without it and changes nothing.
 */
export { LLM_TASKS, LlmHealth, LlmTask, LlmUsage, STRUCTURED_FORMATS, StructuredFormat } from '../core/llm.js'
export type { ChatMessage, ChatOptions, LlmProvider, StructuredOptions } from './types.js'
export { createOpenAIChat, type OpenAIChatDeps } from './openai.js'
export { firstJsonValue, parseStructured, readJson, stripFences, type AnswerProblem } from './structured.js'
export { boundedForGrammar, GRAMMAR_BOUNDS, isFormatRefusal, nextFormat, refusesFormat, responseFormat, withSchemaInPrompt } from './formats.js'
export { findSecrets, redactDeep, redactSecrets, KNOWHUB_RULES, type SecretFinding, type SecretKind } from './secrets.js'
