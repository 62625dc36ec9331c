/**
 * Evolve (seed 003 `evolve_feedback`): the LLM rewrites an entry's content from the entry,
 * its helpful/harmful history and the feedback. Only the content changes — scopes, owner,
 * types and tags never do through evolve — and the previous version is kept. The rewrite is
 * asked for and validated before anything is written: a failed or invalid answer leaves the
 * entry untouched.
 */
import { z } from 'zod'
import type { FeedbackRecord } from '../../core/knowledge.js'
import { redactDeep, type LlmProvider } from '../../llm/index.js'
import type { ChatMessage } from '../../llm/types.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../prompt-data.js'

/** The model's answer: the new content and a one-line summary of what changed. */
export const EvolvedContent = z.object({
  content: z.string().trim().min(1, 'content must not be empty'),
  change: z.string().max(500).default(''),
})
export type EvolvedContent = z.output<typeof EvolvedContent>

/** The last cases of a history the model sees (the newest). */
const HISTORY_CASES = 10

const SYSTEM = [
  'You maintain a knowledge base for AI agents. You rewrite the content of one knowledge entry so that it serves future tasks better.',
  'Use the feedback and the helpful and harmful cases: keep what worked, correct or qualify what failed, stay concise and concrete.',
  'Keep the language of the entry (a Chinese entry stays Chinese). Never add secrets (passwords, tokens, cookies, keys).',
  DATA_NOT_INSTRUCTIONS,
  'Answer with a JSON object: {"content": the full new content, "change": one sentence saying what changed}.',
].join('\n')

const brief = (cases: FeedbackRecord[]): FeedbackRecord[] => cases.slice(-HISTORY_CASES)

/**
 * The cases the model is shown: the newest helpful and harmful ones (the rewrite may rest on them too).
 * @example
 * evolveCases({ helpful: [{ task: 'a' }], harmful: [] }) // [{ task: 'a' }]
 */
export function evolveCases(history: { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }): FeedbackRecord[] {
  return [...brief(history.helpful), ...brief(history.harmful)]
}

/**
 * The messages of one evolve request.
 * @example
 * const messages = evolveMessages(record, { helpful: [], harmful: [] }, 'mention the proxy')
 */
export function evolveMessages(record: KnowledgeRecord, history: { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }, feedback: string): ChatMessage[] {
  const entry = { task: record.task, types: record.types, tags: record.tags, content: record.content }
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        dataBlock('The entry', entry),
        dataBlock('Helpful cases (newest last)', brief(history.helpful)),
        dataBlock('Harmful cases (newest last)', brief(history.harmful)),
        dataBlock('The feedback', feedback),
      ].join('\n\n'),
    },
  ]
}

const clamp = (n: number, low: number, high: number): number => Math.max(low, Math.min(high, Math.round(n)))

/**
 * What the rewrite of a content of `chars` characters is asked with: room for half as much again
 * (a small model held to the schema by a grammar cannot ramble past it), and the `max_tokens`
 * that text takes (about 2 characters a token, Chinese nearer 1).
 * @example
 * evolveBounds(300).maxTokens // 350
 */
export function evolveBounds(chars: number): { ask: z.ZodType; maxTokens: number } {
  const room = clamp(chars * 1.5 + 200, 400, 20_000)
  return {
    ask: z.object({ content: z.string().min(1).max(room), change: z.string().max(200) }),
    maxTokens: clamp(chars / 2 + 200, 300, 4000),
  }
}

/**
 * Asks the model for the evolved content of `record`; nothing is written here.
 * @example
 * const { content } = await evolveContent(llm, record, history, 'mention the proxy')
 */
export async function evolveContent(
  llm: LlmProvider,
  record: KnowledgeRecord,
  history: { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] },
  feedback: string,
): Promise<EvolvedContent> {
  // The provider redacts secrets both ways; redacting again keeps that true for any provider.
  const { ask, maxTokens } = evolveBounds(record.content.length)
  return redactDeep(await llm.json('evolve', evolveMessages(record, history, feedback), EvolvedContent, { name: 'evolved_entry', ask, maxTokens }))
}
