/**
 * The shapes of the agent context (seed 004), in core because the server, the tools and the
 * HTTP client share them (`knowhub/agent` re-exports them): what `assembleContext` takes and returns,
 * the function index written beside the agent's knowledge, and the report of what went
 * into the budget. Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { SearchResult } from './knowledge.js'
import { Owner, Scope } from './principal.js'

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
  /**
   * The agent's project folder on this machine (the CLI: the current directory): seed 004's
   * `knowledge/self_awareness.md` and `knowledge/minimal/system/system_prompt_minimal.md` there
   * come before the shipped defaults. A local caller only.
   */
  project: z.string().min(1).optional(),
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
  /** Where the agent's files came from: `folder` (a local agent, `~/.agent/NAME/`) or `store` (an agent stored on a server). */
  source: z.enum(['folder', 'store']),
  /** The agent home on this machine (a local agent only: a server never shows its paths). */
  home: z.string().optional(),
  language: AgentLanguage,
  budget: z.number().int(),
  used: z.number().int(),
  parts: z.array(ContextPart),
  /**
   * The function index: a local agent's file (`written` false when the agent has no folder: a
   * read creates none), or a stored agent's document (its API path).
   */
  function_index: z.object({ path: z.string(), functions: z.number().int(), written: z.boolean().optional() }),
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
  /** Where the new memory is: a local file, or a stored agent's document (its API path). */
  memory_path: z.string().optional(),
  memory_tokens: z.number().int().optional(),
  /** Where the previous memory was kept: a file in `compact_history/`, or the document's previous version. */
  previous_version: z.string().optional(),
  /** The new memory itself, when the caller keeps it (`POST /api/agent/compact`: nothing is stored on the server). */
  memory: z.string().optional(),
  extraction: z
    .object({
      status: z.enum(['saved', 'not_configured', 'failed']),
      ids: z.array(z.string()),
      message: z.string().optional(),
    })
    .optional(),
})
export type CompactResult = z.output<typeof CompactResult>

/**
 * A history to compact on a server: a stored agent's (`POST /api/agents/{agent}/compact`, no
 * `agent` in the body), or one the caller keeps with its memory (`POST /api/agent/compact`,
 * `previous_memory` given and the new memory answered, nothing stored).
 * @example
 * CompactRequest.parse({ history: [{ role: 'user', content: 'Write chapter 3' }], threshold: 1000 })
 */
export const CompactRequest = CompactInput.omit({ agent: true, home: true })
export type CompactRequest = z.input<typeof CompactRequest>

/**
 * `POST /api/agent/compact`: a local agent's history compacted by the server (its LLM and
 * extraction): the previous memory is sent, the new one answered; the server stores no memory.
 * @example
 * LocalCompactRequest.parse({ agent: 'book_agent', history, previous_memory: '## Decisions…' })
 */
export const LocalCompactRequest = CompactInput.omit({ home: true }).extend({ previous_memory: z.string().max(4_000_000).optional() })
export type LocalCompactRequest = z.input<typeof LocalCompactRequest>

/**
 * A document of a stored agent: a path inside the agent (`knowledge.md`, `skills/style.md`).
 * Segments of letters, digits, `.`, `_`, `-`, none starting with a dot: no `..`, no hidden
 * file, no absolute path.
 * @example
 * AgentDocumentName.parse('skills/style.md')
 * AgentDocumentName.safeParse('../etc/passwd').success // false
 */
export const AgentDocumentName = z
  .string()
  .max(200)
  .regex(
    /^(?:[\p{L}\p{N}_-][\p{L}\p{N}._-]*\/){0,7}[\p{L}\p{N}_-][\p{L}\p{N}._-]*$/u,
    'a document name is a relative path of letters, digits, . _ -, no segment starting with a dot',
  )
export type AgentDocumentName = z.output<typeof AgentDocumentName>

/**
 * One version of a stored agent's document (without `content` in lists).
 * @example
 * const doc = AgentDocument.parse(await kh.agents.document('book_agent', 'knowledge.md'))
 */
export const AgentDocumentInfo = z.object({
  agent: AgentName,
  name: z.string(),
  version: z.number().int(),
  owner: Owner,
  scopes: z.array(Scope),
  bytes: z.number().int(),
  written_by: z.string(),
  created_at: z.string(),
})
export type AgentDocumentInfo = z.output<typeof AgentDocumentInfo>

/** A document with its content. */
export const AgentDocument = AgentDocumentInfo.extend({ content: z.string() })
export type AgentDocument = z.output<typeof AgentDocument>

/**
 * `PUT /api/agents/{agent}/documents/{name}`: a new version. `scopes` default to the current
 * version's (a new document: the agent and the writer's first scope); `expected_version` makes
 * the write conditional (`conflict` when another write came first; 0: only if it does not exist).
 * @example
 * WriteAgentDocumentInput.parse({ content: '## @learning\nContract: read, then save.' })
 */
export const WriteAgentDocumentInput = z.strictObject({
  content: z.string(),
  scopes: z.array(Scope).min(1).max(20).optional(),
  expected_version: z.number().int().min(0).optional(),
})
export type WriteAgentDocumentInput = z.input<typeof WriteAgentDocumentInput>

/**
 * A stored agent as `GET /api/agents` lists it: its current documents the caller may see.
 * @example
 * AgentSummary.parse({ agent: 'book_agent', documents: ['knowledge.md'], updated_at: '2026-11-26T12:00:00.000Z' })
 */
export const AgentSummary = z.object({ agent: AgentName, documents: z.array(z.string()), updated_at: z.string() })
export type AgentSummary = z.output<typeof AgentSummary>

/** `GET /api/agents`. */
export const AgentList = z.object({ agents: z.array(AgentSummary) })
export type AgentList = z.output<typeof AgentList>

/** `GET /api/agents/{agent}/documents` (current versions) and `GET /api/agents/{agent}/versions/{name}`. */
export const AgentDocumentList = z.object({ agent: AgentName, documents: z.array(AgentDocumentInfo) })
export type AgentDocumentList = z.output<typeof AgentDocumentList>

/**
 * A knowledge entry as the agent context shows it (the tools' wrapper): `POST /api/agent/knowledge`.
 * @example
 * ContextEntry.parse({ id: 'knowledge-…', task: 't', content: 'c', types: ['tool'], tags: {}, scopes: ['public'], resource_ids: [], eval: { score: 3, helpful: 0, harmful: 0 } })
 */
export const ContextEntry = SearchResult.pick({ id: true, task: true, content: true, types: true, tags: true, scopes: true, resource_ids: true }).extend({
  eval: z.object({ score: z.number(), helpful: z.number(), harmful: z.number() }),
  quality_score: z.number().optional(),
  owner: z.string().optional(),
  status: z.string().optional(),
  version: z.number().int().optional(),
})
export type ContextEntry = z.output<typeof ContextEntry>

/**
 * `POST /api/agent/knowledge`: KnowHub's part of a context that the caller assembles itself
 * from its own agent folder (the CLI beside a server): the caller's profile entries, entries
 * related to the task, and the pack catalog it may see.
 * @example
 * AgentKnowledgeRequest.parse({ task: 'Write chapter 3', language: 'zh' })
 */
export const AgentKnowledgeRequest = z.strictObject({
  task: z.string().max(MAX_TASK_CHARS).optional(),
  language: AgentLanguage.optional(),
})
export type AgentKnowledgeRequest = z.input<typeof AgentKnowledgeRequest>

/** What `POST /api/agent/knowledge` answers. */
export const AgentKnowledge = z.object({
  profile: z.array(ContextEntry),
  related: z.array(ContextEntry),
  packs: z.object({ text: z.string(), count: z.number().int() }).optional(),
})
export type AgentKnowledge = z.output<typeof AgentKnowledge>
