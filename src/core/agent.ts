/**
 * The shapes of the agent context (seed 004), in core because the server, the tools and the
 * HTTP client share them (`knowhub/agent` re-exports them): what `assembleContext` takes and returns,
 * the function index written beside the agent's knowledge, and the report of what went
 * into the budget. Each schema and its inferred type share a name.
 */
import { z } from 'zod'

/**
 * Longest task text an assembly takes (characters).
 * @example
 * AssembleContextInput.safeParse({ agent: 'a', task: 'x'.repeat(MAX_TASK_CHARS + 1) }).success // false
 */
export const MAX_TASK_CHARS = 20_000

/**
 * An agent's name: its folder under the agent home. Letters (any script), digits, `.`, `_`
 * and `-`, starting with a letter or digit: no separator, no `..`.
 * @example
 * AgentName.parse('book_agent') // 'book_agent'
 * AgentName.safeParse('../etc').success // false
 */
export const AgentName = z
  .string()
  .regex(/^[\p{L}\p{N}][\p{L}\p{N}._-]{0,63}$/u, 'an agent name is 1-64 letters, digits, . _ or -, starting with a letter or digit')
export type AgentName = z.output<typeof AgentName>

/**
 * The language of the default template, self-awareness file and fixed labels.
 * @example
 * AgentLanguage.parse('zh') // compact memory prefixed '[已加载历史压缩记忆]'
 */
export const AgentLanguage = z.enum(['en', 'zh'])
export type AgentLanguage = z.output<typeof AgentLanguage>

/**
 * What an assembly takes (besides the calling principal). `home` defaults to the configured
 * agent home (`~/.agent`); `template` is a path to a system-prompt template that replaces
 * the default; `knowledgeFiles` are paths inside the agent's folder.
 * @example
 * AssembleContextInput.parse({ agent: 'book_agent', task: 'Write chapter 3', budget: 8000 })
 */
export const AssembleContextInput = z.strictObject({
  agent: AgentName,
  home: z.string().min(1).optional(),
  template: z.string().min(1).optional(),
  knowledgeFiles: z.array(z.string().min(1).max(500)).max(64).default([]),
  task: z.string().max(MAX_TASK_CHARS).optional(),
  budget: z.number().int().min(1).max(2_000_000).optional(),
  language: AgentLanguage.optional(),
})
export type AssembleContextInput = z.input<typeof AssembleContextInput>

/**
 * What a remote caller (HTTP, MCP prompt) may ask for: no `home` and no `template` (the
 * server's configuration decides where agents live).
 * @example
 * AgentContextRequest.parse({ agent: 'book_agent', task: 'Write chapter 3', knowledge_files: ['skills/style.md'] })
 */
export const AgentContextRequest = z.strictObject({
  agent: AgentName,
  task: z.string().max(MAX_TASK_CHARS).optional(),
  knowledge_files: z.array(z.string().min(1).max(500)).max(64).optional(),
  budget: z.number().int().min(1).max(2_000_000).optional(),
  language: AgentLanguage.optional(),
})
export type AgentContextRequest = z.input<typeof AgentContextRequest>

/**
 * One chat message of the assembled context.
 * @example
 * ContextMessage.parse({ role: 'assistant', content: '[已加载历史压缩记忆]\n…' })
 */
export const ContextMessage = z.object({ role: z.enum(['system', 'assistant']), content: z.string() })
export type ContextMessage = z.output<typeof ContextMessage>

/**
 * One part of the context in the report: where it went, its tokens before and after the
 * budget, and why it was cut or shortened (`status` absent: the file or knowledge was not there).
 * @example
 * ContextPart.parse({ name: 'knowledge.md', role: 'system', status: 'included', tokens: 120, original_tokens: 120 })
 */
export const ContextPart = z.object({
  name: z.string(),
  role: z.enum(['system', 'assistant']),
  status: z.enum(['included', 'truncated', 'cut', 'absent']),
  /** Tokens in the context. */
  tokens: z.number().int(),
  /** Tokens before the budget was applied. */
  original_tokens: z.number().int(),
  /** The file it came from, when it came from one. */
  path: z.string().optional(),
  /** Entries or packs: how many were offered and how many made it in. */
  items: z.number().int().optional(),
  included_items: z.number().int().optional(),
  /** Ids of the knowledge entries put in. */
  ids: z.array(z.string()).optional(),
  reason: z.string().optional(),
})
export type ContextPart = z.output<typeof ContextPart>

/**
 * The audit of one assembly: the budget, the tokens used (never above the budget), every
 * part in priority order, and where the function index was written.
 * @example
 * const { report } = await agent.assembleContext({ agent: 'book_agent', principal })
 * report.used <= report.budget // true
 */
export const ContextReport = z.object({
  agent: z.string(),
  home: z.string(),
  language: AgentLanguage,
  budget: z.number().int(),
  used: z.number().int(),
  parts: z.array(ContextPart),
  function_index: z.object({ path: z.string(), functions: z.number().int() }),
})
export type ContextReport = z.output<typeof ContextReport>

/**
 * The assembled context: messages to start the agent with, and the report.
 * @example
 * AssembledContext.parse(await agent.assembleContext({ agent: 'book_agent', principal })).messages[0].role // 'system'
 */
export const AssembledContext = z.object({ messages: z.array(ContextMessage), report: ContextReport })
export type AssembledContext = z.output<typeof AssembledContext>

/**
 * A knowledge function as the index lists it: a contract is executed exactly as written,
 * a soft function is guidance.
 * @example
 * FunctionEntry.parse({ name: 'learning', func_type: 'contract', path: '/home/a/.agent/x/knowledge.md', line: 12, summary: 'Learn from a source' })
 */
export const FunctionEntry = z.object({
  name: z.string(),
  func_type: z.enum(['contract', 'soft']),
  path: z.string(),
  line: z.number().int(),
  summary: z.string(),
})
export type FunctionEntry = z.output<typeof FunctionEntry>

/**
 * `knowledge_function_index.json`: the functions of an agent's knowledge files by name
 * (the first declaration of a name wins; later ones are listed in `duplicates`).
 * @example
 * FunctionIndex.parse(JSON.parse(await readFile(indexPath, 'utf8'))).functions.learning?.func_type
 */
export const FunctionIndex = z.object({
  version: z.literal(1),
  agent: z.string(),
  generated_at: z.string(),
  files: z.array(z.string()),
  functions: z.record(z.string(), FunctionEntry),
  duplicates: z.array(FunctionEntry),
})
export type FunctionIndex = z.output<typeof FunctionIndex>

/**
 * One message of a history to compact (OpenAI-style; tool results count as text).
 * @example
 * HistoryMessage.parse({ role: 'tool', content: '{"status":"ok"}' })
 */
export const HistoryMessage = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool', 'developer']),
  content: z.string().max(2_000_000),
})
export type HistoryMessage = z.output<typeof HistoryMessage>

/**
 * What `compact` takes: the agent, its history, the threshold in tokens (default the
 * configured one, 70,000: seed 004), how many recent tokens stay as they are (default a
 * quarter of the threshold), and the trace the history belongs to (for extraction).
 * @example
 * CompactInput.parse({ agent: 'book_agent', history: [{ role: 'user', content: 'Write chapter 3' }] })
 */
export const CompactInput = z.strictObject({
  agent: AgentName,
  home: z.string().min(1).optional(),
  history: z.array(HistoryMessage).min(1, 'the history is empty').max(100_000),
  threshold: z.number().int().min(100).optional(),
  keep_recent: z.number().int().min(0).optional(),
  trace_id: z.string().min(1).max(200).optional(),
  language: AgentLanguage.optional(),
})
export type CompactInput = z.input<typeof CompactInput>

/**
 * What `compact` did: nothing under the threshold; past it, where the new memory is, where
 * the previous one was kept, which recent messages to continue with, and what extraction saved.
 * @example
 * const result = CompactResult.parse(await agent.compact({ agent: 'book_agent', history }, principal))
 * if (result.compacted) messages = [...(await agent.assembleContext({ agent: 'book_agent', principal })).messages, ...result.kept]
 */
export const CompactResult = z.object({
  compacted: z.boolean(),
  tokens: z.number().int(),
  threshold: z.number().int(),
  summarized_messages: z.number().int(),
  kept: z.array(HistoryMessage),
  memory_path: z.string().optional(),
  memory_tokens: z.number().int().optional(),
  previous_version: z.string().optional(),
  extraction: z
    .object({
      status: z.enum(['saved', 'not_configured', 'failed']),
      ids: z.array(z.string()),
      message: z.string().optional(),
    })
    .optional(),
})
export type CompactResult = z.output<typeof CompactResult>
