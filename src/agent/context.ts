/**
 * Assembling an agent's starting context (seed 004), in named steps:
 * - `loadFiles`: the template (a user template, the agent's own, or the shipped default),
 *   the mandatory self-awareness file (the agent's own, else the default), the agent's
 *   `knowledge.md` when present, the files the caller names, and the compact memory;
 * - `writeIndex`: the function index, generated from the knowledge files and written to disk;
 * - `gatherKnowledge`: from KnowHub, the user's profile entries (confidence, then helpful),
 *   entries related to the task, the knowledge-pack catalog — wrapped as data;
 * - `render`: the budget (budget.ts), the system prompt and the compact memory as an
 *   assistant message, and the report.
 */
import { join } from 'node:path'
import type { z } from 'zod'
import type { Clock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { requirePermission, visibleScopes, type Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { EntryView } from '../core/wrap-entries.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { PackService } from '../packs/service.js'
import type { Store } from '../store/store.js'
import { countTokens, cutLowest, fillParts, truncateTokens, type DraftPart, type FilledPart } from './budget.js'
import { AGENT_FILES, agentHome, pathInside, readTextFile, writeFileAtomic } from './files.js'
import { buildFunctionIndex, type IndexSource } from './function-index.js'
import { AGENT_DEFAULTS_DIR, agentLabels, type AgentLabels } from './labels.js'
import { AssembleContextInput, type AgentLanguage, type FunctionIndex, type AssembledContext, type ContextMessage, type ContextPart } from '../core/agent.js'
import { checkTemplate, renderTemplate, type Placeholder } from './template.js'

/** Settings of the assembly (from the `agent` config). */
export interface AgentSettings {
  home?: string | undefined
  language: AgentLanguage
  budget: number
  maxFileBytes: number
  profileLimit: number
  relatedLimit: number
  /** Folder of `<language>/system_prompt.md` and `self_awareness.md` (default: the shipped ones). */
  defaultsDir?: string | undefined
}

/** What an assembly reads from: the store (profile entries), knowledge search, packs. */
export interface AssemblyDeps {
  store: Pick<Store, 'knowledge'>
  knowledge: Pick<KnowledgeService, 'search'>
  packs?: Pick<PackService, 'catalog'> | undefined
  settings: AgentSettings
  clock: Clock
  logger: Logger
}

/** The files of one assembly. */
interface LoadedFiles {
  dir: string
  template: { path: string; text: string }
  selfAwareness: { path: string; text: string }
  knowledge?: { path: string; text: string }
  extra: Array<{ name: string; path: string; text: string }>
  compact?: { path: string; text: string }
}

async function requiredFile(candidates: readonly string[], what: string, maxBytes: number): Promise<{ path: string; text: string }> {
  for (const path of candidates) {
    const text = await readTextFile(path, maxBytes)
    if (text !== undefined) return { path, text }
  }
  throw new KnowHubError('not_found', `${what} is missing: none of ${candidates.join(', ')} exists`, { looked_in: candidates })
}

async function optionalFile(path: string, maxBytes: number): Promise<{ path: string; text: string } | undefined> {
  const text = await readTextFile(path, maxBytes)
  return text === undefined ? undefined : { path, text }
}

/** Reads every file of the assembly (see the module comment). */
async function loadFiles(input: z.output<typeof AssembleContextInput>, home: string, language: AgentLanguage, settings: AgentSettings): Promise<LoadedFiles> {
  const dir = join(home, input.agent)
  const defaults = join(settings.defaultsDir ?? AGENT_DEFAULTS_DIR, language)
  const max = settings.maxFileBytes
  const templates = input.template !== undefined ? [input.template] : [join(dir, AGENT_FILES.template), join(defaults, AGENT_FILES.template)]
  const template = await requiredFile(templates, 'The system-prompt template', max)
  checkTemplate(template.text, template.path)
  const selfAwareness = await requiredFile(
    [join(dir, AGENT_FILES.selfAwareness), join(defaults, AGENT_FILES.selfAwareness)],
    'self_awareness.md (mandatory)',
    max,
  )
  const extra: LoadedFiles['extra'] = []
  for (const name of input.knowledgeFiles ?? []) {
    const path = await pathInside(dir, name)
    const text = await readTextFile(path, max)
    if (text === undefined) throw new KnowHubError('not_found', `Knowledge file "${name}" does not exist in ${dir}`, { file: name })
    extra.push({ name, path, text })
  }
  const knowledge = await optionalFile(join(dir, AGENT_FILES.knowledge), max)
  const compact = await optionalFile(join(dir, AGENT_FILES.compact), max)
  return { dir, template, selfAwareness, extra, ...(knowledge ? { knowledge } : {}), ...(compact ? { compact } : {}) }
}

/** Builds the function index of the knowledge files and writes it atomically. */
async function writeIndex(agent: string, files: LoadedFiles, at: Date): Promise<{ path: string; functions: number; index: FunctionIndex }> {
  const sources: IndexSource[] = [files.selfAwareness, ...(files.knowledge ? [files.knowledge] : []), ...files.extra].map((f) => ({
    path: f.path,
    text: f.text,
  }))
  const index = buildFunctionIndex(agent, sources, at)
  const path = join(files.dir, AGENT_FILES.functionIndex)
  await writeFileAtomic(path, `${JSON.stringify(index, null, 2)}\n`)
  return { path, functions: Object.keys(index.functions).length, index }
}

/**
 * Regenerates an agent's function index from its knowledge files (self-awareness,
 * `knowledge.md`, the named files) without assembling a context.
 * @example
 * const { path, index } = await indexAgentFunctions(settings, { agent: 'book_agent' }, clock)
 */
export async function indexAgentFunctions(
  settings: AgentSettings,
  raw: unknown,
  clock: Clock,
): Promise<{ path: string; functions: number; index: FunctionIndex }> {
  const input = parseWith(AssembleContextInput, raw, 'agent index request')
  const language = input.language ?? settings.language
  const files = await loadFiles(input, agentHome(input.home ?? settings.home), language, settings)
  return writeIndex(input.agent, files, clock.now())
}

/** KnowHub's knowledge for the context: profile entries, entries related to the task, the pack catalog. */
async function gatherKnowledge(deps: AssemblyDeps, principal: Principal, task: string | undefined, language: AgentLanguage) {
  const { profileLimit, relatedLimit } = deps.settings
  const profile: EntryView[] =
    profileLimit > 0
      ? (await deps.store.knowledge.topByConfidence({ visible: visibleScopes(principal), types: ['user_profile'] }, profileLimit)).map((r) => ({
          ...r,
          eval: { score: r.score, helpful: r.helpful, harmful: r.harmful },
        }))
      : []
  const seen = new Set(profile.map((e) => e.id))
  const related: EntryView[] =
    task !== undefined && task.trim() !== '' && relatedLimit > 0
      ? (await deps.knowledge.search({ q: task, top_k: relatedLimit }, principal)).results.filter((r) => !seen.has(r.id))
      : []
  const catalog = deps.packs ? await deps.packs.catalog({ language }) : undefined
  const packs = catalog?.xml !== undefined ? { text: `${catalog.instruction}\n${catalog.xml}`, count: catalog.items.length } : undefined
  return { profile, related, packs }
}

function drafts(files: LoadedFiles, knowledge: Awaited<ReturnType<typeof gatherKnowledge>>, task: string, labels: AgentLabels): DraftPart[] {
  const file = (name: string, f: { path: string; text: string } | undefined, mandatory = false): DraftPart =>
    f ? { name, role: 'system', mandatory, path: f.path, text: f.text } : { name, role: 'system', mandatory, absent: 'no such file' }
  return [
    file('self_awareness.md', files.selfAwareness, true),
    { name: 'task', role: 'system', mandatory: true, text: task },
    file('knowledge.md', files.knowledge),
    ...files.extra.map((f) => file(`file:${f.name}`, f)),
    files.compact
      ? { name: 'compact.md', role: 'assistant', mandatory: false, path: files.compact.path, text: `${labels.compactPrefix}\n${files.compact.text}` }
      : { name: 'compact.md', role: 'assistant', mandatory: false, absent: 'no compact memory yet' },
    knowledge.profile.length > 0
      ? { name: 'user_profile', role: 'system', mandatory: false, entries: knowledge.profile, caption: labels.profileCaption }
      : { name: 'user_profile', role: 'system', mandatory: false, absent: 'no visible user_profile entries' },
    knowledge.related.length > 0
      ? { name: 'related_knowledge', role: 'system', mandatory: false, entries: knowledge.related, caption: labels.relatedCaption }
      : { name: 'related_knowledge', role: 'system', mandatory: false, absent: task === labels.noTask ? 'no task given' : 'no visible entry matches the task' },
    knowledge.packs
      ? { name: 'knowledge_packs', role: 'system', mandatory: false, text: knowledge.packs.text }
      : { name: 'knowledge_packs', role: 'system', mandatory: false, absent: 'no knowledge packs found' },
  ]
}

/** The messages of the filled parts: the system prompt, then the compact memory as an assistant message. */
function messagesOf(template: string, fixed: Partial<Record<Placeholder, string>>, filled: readonly FilledPart[]): ContextMessage[] {
  const text = (name: string) => filled.find((p) => p.draft.name === name)?.text ?? ''
  const join2 = (...parts: string[]) => parts.filter((p) => p !== '').join('\n\n')
  const knowledgeFiles = filled.filter((p) => p.draft.name === 'knowledge.md' || p.draft.name.startsWith('file:')).map((p) => p.text)
  const system = renderTemplate(template, {
    ...fixed,
    self_awareness: text('self_awareness.md'),
    knowledge: join2(...knowledgeFiles),
    knowhub_knowledge: join2(text('user_profile'), text('related_knowledge')),
    knowledge_packs: text('knowledge_packs'),
    task: text('task'),
  })
  const compact = text('compact.md')
  return [{ role: 'system', content: system }, ...(compact !== '' ? [{ role: 'assistant' as const, content: compact }] : [])]
}

const total = (messages: readonly ContextMessage[]) => messages.reduce((sum, m) => sum + countTokens(m.content), 0)

/**
 * Assembles an agent's starting context within a token budget (see the module comment).
 * @example
 * const { messages, report } = await assembleAgentContext(deps, { agent: 'book_agent', task: 'Write chapter 3' }, principal)
 */
export async function assembleAgentContext(deps: AssemblyDeps, raw: unknown, principal: Principal): Promise<AssembledContext> {
  const input = parseWith(AssembleContextInput, raw, 'agent context')
  requirePermission(principal, 'read')
  const language = input.language ?? deps.settings.language
  const labels = agentLabels(language)
  const budget = input.budget ?? deps.settings.budget
  const home = agentHome(input.home ?? deps.settings.home)
  const files = await loadFiles(input, home, language, deps.settings)
  const index = await writeIndex(input.agent, files, deps.clock.now())
  const knowledge = await gatherKnowledge(deps, principal, input.task, language)
  const task = input.task !== undefined && input.task.trim() !== '' ? input.task : labels.noTask
  const fixed = { agent: input.agent, function_index_path: index.path }
  const staticTokens = countTokens(renderTemplate(files.template.text, fixed))
  const parts = drafts(files, knowledge, task, labels)
  // Two tokens per part for the blank lines that join them.
  const filled = fillParts(parts, budget, staticTokens + 2 * parts.length, labels.cutMarker)
  let messages = messagesOf(files.template.text, fixed, filled)
  while (total(messages) > budget && cutLowest(filled)) messages = messagesOf(files.template.text, fixed, filled)
  const templatePart: ContextPart = {
    name: 'template',
    role: 'system',
    status: 'included',
    tokens: staticTokens,
    original_tokens: staticTokens,
    path: files.template.path,
  }
  if (total(messages) > budget) {
    // Only mandatory parts are left and they do not fit: the system prompt itself is shortened.
    const system = truncateTokens(messages[0]?.content ?? '', budget, labels.cutMarker)
    messages = [{ role: 'system', content: system }]
    Object.assign(templatePart, { status: 'truncated', reason: `budget: the system prompt was shortened to ${budget} tokens` })
  }
  const used = total(messages)
  deps.logger.debug('agent.context.assembled', { agent: input.agent, budget, used, parts: filled.length })
  return {
    messages,
    report: {
      agent: input.agent,
      home,
      language,
      budget,
      used,
      parts: [templatePart, ...filled.map((p) => p.report)],
      function_index: { path: index.path, functions: index.functions },
    },
  }
}
