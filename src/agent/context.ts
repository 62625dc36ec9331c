/**
 * Assembling an agent's starting context (seed 004), in named steps, from a source of the
 * agent's own files: its folder on this machine (`folderSource`) or, on a server, the agent
 * stored in the caller's org (src/agent/documents.ts):
 * - `loadFiles`: the template (a user template, the agent's own, or the shipped default),
 *   the mandatory self-awareness file (the agent's own, else the default), the agent's
 *   `knowledge.md` when present, the files the caller names, and the compact memory;
 * - `indexOf` / `writeIndex`: the function index, generated from the knowledge files; a local
 *   agent's is written into its folder when the folder exists (a read creates no folder), a
 *   stored agent's is the document generated at each write (nothing written by a read);
 * - `gatherKnowledge`: from KnowHub, the user's profile entries (confidence, then helpful),
 *   entries related to the task, the knowledge-pack catalog — wrapped as data;
 * - `render`: the budget (budget.ts), the system prompt and the compact memory as an
 *   assistant message, and the report.
 */
import { join, relative } from 'node:path'
import type { z } from 'zod'
import type { Clock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { requirePermission, type Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { EntryView } from '../core/wrap-entries.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { PackService } from '../packs/service.js'
import { countTokens, cutLowest, fillParts, truncateTokens, type DraftPart, type FilledPart } from './budget.js'
import { AGENT_FILES, agentFolder, agentHome, pathInside, readAgentFile, readTextFile, writeAgentFile } from './files.js'
import { buildFunctionIndex, type IndexSource } from './function-index.js'
import { AGENT_DEFAULTS_DIR, agentLabels, type AgentLabels } from './labels.js'
import { AssembleContextInput, type AgentLanguage, type FunctionIndex, type AssembledContext, type ContextMessage, type ContextPart } from '../core/agent.js'
import { checkTemplate, renderTemplate, type Placeholder } from './template.js'

/** Settings of the assembly (from the `agent` config). */
export interface AgentSettings {
  home?: string | undefined
  language: AgentLanguage
  /** No language configured: an assembly without one takes it from the agent (name, task, knowledge.md), else `language`. */
  detectLanguage?: boolean | undefined
  budget: number
  maxFileBytes: number
  profileLimit: number
  relatedLimit: number
  /** Folder of `<language>/system_prompt.md` and `self_awareness.md` (default: the shipped ones). */
  defaultsDir?: string | undefined
}

/** What an assembly reads from: the knowledge service (profile entries, search), packs. */
export interface AssemblyDeps {
  knowledge: Pick<KnowledgeService, 'search' | 'profileViews'>
  packs?: Pick<PackService, 'catalog'> | undefined
  settings: AgentSettings
  clock: Clock
  logger: Logger
}

/** A file of the assembly: what the report shows of where it came from (`ref`), and its text. */
export interface SourceFile {
  ref: string
  text: string
}

/**
 * Where an agent's own files come from: its folder on this machine ({@link folderSource}) or a
 * stored agent's documents (src/agent/documents.ts). The shipped defaults fill in what it lacks.
 */
export interface AgentFilesSource {
  readonly kind: 'folder' | 'store'
  /** The agent home on this machine (a folder only). */
  readonly home?: string
  /** One of the agent's fixed files (`knowledge.md`, …), or undefined when absent. */
  read(name: string): Promise<SourceFile | undefined>
  /** A knowledge file the caller names: `not_found` when it does not exist; refused when it leads out. */
  readNamed(name: string): Promise<SourceFile>
  /**
   * Seed 004's file of the agent's project (`knowledge/self_awareness.md`,
   * `knowledge/minimal/system/system_prompt_minimal.md`), between the agent's own and the shipped
   * default; absent for a stored agent (a server reads no project folder of a caller).
   */
  project?(name: string): Promise<SourceFile | undefined>
  /** How a shipped default shows in the report (a server shows no path of its own). */
  defaultRef(language: AgentLanguage, file: string, path: string): string
  /** Puts the generated function index where the agent reads it; `written` false when nothing was written. */
  writeIndex(index: FunctionIndex): Promise<{ path: string; written: boolean }>
}

/**
 * A local agent's folder as a source: `<home>/<agent>/`, every file read without following a
 * link; the function index written into the folder when it exists (a read creates nothing).
 * With `project`, seed 004's files of the agent's project folder (see {@link PROJECT_FILES}).
 * @example
 * const source = await folderSource('/home/me/.agent', 'book_agent', 1_048_576, process.cwd())
 */
export async function folderSource(home: string, agent: string, maxBytes: number, project?: string): Promise<AgentFilesSource> {
  const dir = await agentFolder(home, agent)
  const path = (name: string) => join(home, agent, name)
  return {
    kind: 'folder',
    home,
    async project(name) {
      const file = PROJECT_FILES[name]
      if (project === undefined || file === undefined) return undefined
      const text = await readAgentFile(project, file, maxBytes)
      return text === undefined ? undefined : { ref: join(project, file), text }
    },
    async read(name) {
      if (dir === undefined) return undefined
      const text = await readAgentFile(dir, name, maxBytes)
      return text === undefined ? undefined : { ref: path(name), text }
    },
    async readNamed(name) {
      const inside = await pathInside(join(home, agent), name)
      const text = dir === undefined ? undefined : await readAgentFile(dir, relative(dir, inside), maxBytes)
      if (text === undefined) throw new KnowHubError('not_found', `Knowledge file "${name}" does not exist in the agent folder "${agent}"`, { file: name })
      return { ref: inside, text }
    },
    defaultRef: (_language, _file, filePath) => filePath,
    async writeIndex(index) {
      if (dir === undefined) return { path: path(AGENT_FILES.functionIndex), written: false }
      return { path: await writeAgentFile(home, agent, AGENT_FILES.functionIndex, `${JSON.stringify(index, null, 2)}\n`), written: true }
    },
  }
}

/**
 * Seed 004's names, in the agent's project folder, of the files KnowHub's agent folder calls
 * `self_awareness.md` and `system_prompt.md`: `knowledge/self_awareness.md` and the template
 * `knowledge/minimal/system/system_prompt_minimal.md`.
 */
export const PROJECT_FILES: Readonly<Record<string, string>> = {
  [AGENT_FILES.selfAwareness]: 'knowledge/self_awareness.md',
  [AGENT_FILES.template]: 'knowledge/minimal/system/system_prompt_minimal.md',
}

/** The files of one assembly. */
interface LoadedFiles {
  template: SourceFile
  selfAwareness: SourceFile
  knowledge?: SourceFile
  extra: Array<SourceFile & { name: string }>
  compact?: SourceFile
}

/** The agent's own file, else its project's (seed 004's name), else the shipped default (mandatory: `not_found` naming them). */
async function ownOrDefault(source: AgentFilesSource, name: string, language: AgentLanguage, settings: AgentSettings, what: string): Promise<SourceFile> {
  const own = (await source.read(name)) ?? (await source.project?.(name))
  if (own) return own
  const path = join(settings.defaultsDir ?? AGENT_DEFAULTS_DIR, language, name)
  const text = await readTextFile(path, settings.maxFileBytes)
  if (text !== undefined) return { ref: source.defaultRef(language, name, path), text }
  throw new KnowHubError('not_found', `${what} is missing: neither the agent's own ${name} nor the default ${source.defaultRef(language, name, path)} exists`, {
    file: name,
  })
}

/** Reads every file of the assembly (see the module comment). */
async function loadFiles(
  input: z.output<typeof AssembleContextInput>,
  source: AgentFilesSource,
  language: AgentLanguage,
  settings: AgentSettings,
): Promise<LoadedFiles> {
  const max = settings.maxFileBytes
  let template: SourceFile
  if (input.template !== undefined) {
    // A template the local caller names (library or CLI: never a remote caller).
    const text = await readTextFile(input.template, max)
    if (text === undefined) throw new KnowHubError('not_found', `The system-prompt template ${input.template} does not exist`, { file: input.template })
    template = { ref: input.template, text }
  } else {
    template = await ownOrDefault(source, AGENT_FILES.template, language, settings, 'The system-prompt template')
  }
  checkTemplate(template.text, template.ref)
  const selfAwareness = await ownOrDefault(source, AGENT_FILES.selfAwareness, language, settings, 'self_awareness.md (mandatory)')
  const extra: LoadedFiles['extra'] = []
  for (const name of input.knowledgeFiles ?? []) extra.push({ name, ...(await source.readNamed(name)) })
  const knowledge = await source.read(AGENT_FILES.knowledge)
  const compact = await source.read(AGENT_FILES.compact)
  return { template, selfAwareness, extra, ...(knowledge ? { knowledge } : {}), ...(compact ? { compact } : {}) }
}

/** The function index of the loaded knowledge files (self-awareness, knowledge.md, the named files). */
function indexOf(agent: string, files: LoadedFiles, at: Date): FunctionIndex {
  const sources: IndexSource[] = [files.selfAwareness, ...(files.knowledge ? [files.knowledge] : []), ...files.extra].map((f) => ({
    path: f.ref,
    text: f.text,
  }))
  return buildFunctionIndex(agent, sources, at)
}

/**
 * Regenerates a local agent's function index from its knowledge files (self-awareness,
 * `knowledge.md`, the named files) without assembling a context. The folder must exist.
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
  const home = agentHome(input.home ?? settings.home)
  const source = await folderSource(home, input.agent, settings.maxFileBytes, input.project)
  const files = await loadFiles(input, source, language, settings)
  const index = indexOf(input.agent, files, clock.now())
  const written = await source.writeIndex(index)
  if (!written.written)
    throw new KnowHubError('not_found', `The agent folder "${input.agent}" does not exist in ${home}: create it first`, { agent: input.agent })
  return { path: written.path, functions: Object.keys(index.functions).length, index }
}

/** KnowHub's part of a context: profile entries, entries related to the task, the pack catalog. */
export interface GatheredKnowledge {
  profile: EntryView[]
  related: EntryView[]
  packs?: { text: string; count: number } | undefined
}

/**
 * KnowHub's knowledge for the context, as `principal` sees it: profile entries, entries
 * related to the task, the pack catalog (also `POST /api/agent/knowledge`).
 * @example
 * const { profile, related } = await gatherKnowledge(deps, principal, 'Write chapter 3', 'en')
 */
export async function gatherKnowledge(
  deps: Pick<AssemblyDeps, 'knowledge' | 'packs' | 'settings'>,
  principal: Principal,
  task: string | undefined,
  language: AgentLanguage,
): Promise<GatheredKnowledge> {
  const { profileLimit, relatedLimit } = deps.settings
  const profile = await deps.knowledge.profileViews(principal, profileLimit)
  const seen = new Set(profile.map((e) => e.id))
  // An injection: the agent did not ask for these, so they must clear the injection bar (knowledge/search/search.ts, `SearchUse`).
  const related: EntryView[] =
    task !== undefined && task.trim() !== '' && relatedLimit > 0
      ? (await deps.knowledge.search({ q: task, top_k: relatedLimit }, principal, { injection: true })).results.filter((r) => !seen.has(r.id))
      : []
  const catalog = deps.packs ? await deps.packs.catalog({ language }) : undefined
  const packs = catalog?.xml !== undefined ? { text: `${catalog.instruction}\n${catalog.xml}`, count: catalog.items.length } : undefined
  return { profile, related, ...(packs ? { packs } : {}) }
}

function drafts(files: LoadedFiles, knowledge: GatheredKnowledge, task: string, labels: AgentLabels): DraftPart[] {
  const file = (name: string, f: SourceFile | undefined, mandatory = false): DraftPart =>
    f ? { name, role: 'system', mandatory, path: f.ref, text: f.text } : { name, role: 'system', mandatory, absent: 'no such file' }
  // The task first: the shortest mandatory part, and the one a context is for (a small budget shortens self-awareness, never the task).
  return [
    { name: 'task', role: 'system', mandatory: true, text: task },
    file('self_awareness.md', files.selfAwareness, true),
    file('knowledge.md', files.knowledge),
    ...files.extra.map((f) => file(`file:${f.name}`, f)),
    files.compact
      ? { name: 'compact.md', role: 'assistant', mandatory: false, path: files.compact.ref, text: `${labels.compactPrefix}\n${files.compact.text}` }
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

/**
 * The language of an agent from its own texts: Chinese when Han characters make at least a fifth
 * of its letters (a Chinese text keeps English terms such as TypeScript), English when it has
 * letters and fewer; undefined with no letters at all.
 * @example
 * agentLanguageOf(['写作助手', '写第三章']) // 'zh'
 */
export function agentLanguageOf(texts: readonly string[]): AgentLanguage | undefined {
  const text = texts.join('\n').slice(0, 20_000)
  const han = text.match(/\p{Script=Han}/gu)?.length ?? 0
  const latin = text.match(/\p{Script=Latin}/gu)?.length ?? 0
  if (han + latin === 0) return undefined
  return han * 5 >= han + latin ? 'zh' : 'en'
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

/** What one assembly needs besides its input: where the files are, KnowHub's knowledge, settings. */
export interface AssemblyParts {
  source: AgentFilesSource
  /** KnowHub's part: from this process's store, or from a server (`POST /api/agent/knowledge`). */
  knowledge: (task: string | undefined, language: AgentLanguage) => Promise<GatheredKnowledge>
  settings: AgentSettings
  clock: Clock
  logger: Logger
}

/**
 * Assembles an agent's starting context within a token budget (see the module comment), from
 * any source of files and of knowledge. `input` is already checked; the caller checked permissions.
 * @example
 * const { messages, report } = await assembleFrom(parts, { agent: 'book_agent', task: 'Write chapter 3', knowledgeFiles: [] })
 */
export async function assembleFrom(parts: AssemblyParts, input: z.output<typeof AssembleContextInput>): Promise<AssembledContext> {
  const { settings, source } = parts
  const language =
    input.language ??
    (settings.detectLanguage ? agentLanguageOf([input.agent, input.task ?? '', (await source.read(AGENT_FILES.knowledge))?.text ?? '']) : undefined) ??
    settings.language
  const labels = agentLabels(language)
  const budget = input.budget ?? settings.budget
  const files = await loadFiles(input, source, language, settings)
  const index = indexOf(input.agent, files, parts.clock.now())
  const knowledge = await parts.knowledge(input.task, language)
  const written = await source.writeIndex(index)
  const task = input.task !== undefined && input.task.trim() !== '' ? input.task : labels.noTask
  const fixed = { agent: input.agent, function_index_path: written.path }
  const staticTokens = countTokens(renderTemplate(files.template.text, fixed))
  const drafted = drafts(files, knowledge, task, labels)
  // Two tokens per part for the blank lines that join them.
  const filled = fillParts(drafted, budget, staticTokens + 2 * drafted.length, labels.cutMarker)
  let messages = messagesOf(files.template.text, fixed, filled)
  while (total(messages) > budget && cutLowest(filled)) messages = messagesOf(files.template.text, fixed, filled)
  const templatePart: ContextPart = {
    name: 'template',
    role: 'system',
    status: 'included',
    tokens: staticTokens,
    original_tokens: staticTokens,
    path: files.template.ref,
  }
  if (total(messages) > budget) {
    // Only mandatory parts are left and they do not fit: the system prompt itself is shortened.
    const system = truncateTokens(messages[0]?.content ?? '', budget, labels.cutMarker)
    messages = [{ role: 'system', content: system }]
    Object.assign(templatePart, { status: 'truncated', reason: `budget: the system prompt was shortened to ${budget} tokens` })
  }
  const used = total(messages)
  parts.logger.debug('agent.context.assembled', { agent: input.agent, source: source.kind, budget, used, parts: filled.length })
  return {
    messages,
    report: {
      agent: input.agent,
      source: source.kind,
      ...(source.home !== undefined ? { home: source.home } : {}),
      language,
      budget,
      used,
      parts: [templatePart, ...filled.map((p) => p.report)],
      function_index: { path: written.path, functions: Object.keys(index.functions).length, written: written.written },
    },
  }
}

/**
 * Assembles a local agent's starting context (its folder under `input.home`, else the
 * configured home) with KnowHub's knowledge from this process's store, as `principal`.
 * @example
 * const { messages, report } = await assembleAgentContext(deps, { agent: 'book_agent', task: 'Write chapter 3' }, principal)
 */
export async function assembleAgentContext(deps: AssemblyDeps, raw: unknown, principal: Principal, source?: AgentFilesSource): Promise<AssembledContext> {
  const input = parseWith(AssembleContextInput, raw, 'agent context')
  requirePermission(principal, 'read')
  const files = source ?? (await folderSource(agentHome(input.home ?? deps.settings.home), input.agent, deps.settings.maxFileBytes, input.project))
  return assembleFrom(
    {
      source: files,
      knowledge: (task, language) => gatherKnowledge(deps, principal, task, language),
      settings: deps.settings,
      clock: deps.clock,
      logger: deps.logger,
    },
    input,
  )
}
