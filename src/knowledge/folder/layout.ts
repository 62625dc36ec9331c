/**
 * The knowledge folder's layout (seed 002; docs/knowledge-folder.md): which file holds an entry,
 * what a file's path implies for entries written by hand, and the byte-stable text of a file.
 * No I/O.
 *
 * The rule: the entry's scope of highest priority (user > project > agent > team > org >
 * public; the first listed on a tie) picks the section, in seed 002's names: `users/user_<id>/`,
 * `projects/<id>/`, `agents/<id>/`, `teams/<id>/`, or `global/` (org-wide and public). An
 * import also reads `users/<id>/` (the names KnowHub wrote before issue 41) as `user:<id>`. Archived and merged entries go to the section's
 * `archive.json`; the others to the file of their first type — `tools.json`, `definitions.json`,
 * `plans.json`, `strategies.json`, `usecases.json`, and for `user_profile` the file of
 * `tags.category`: `preferences.json`, `habits.json`, `constraints.json`, else `profile.json`
 * (background and the rest).
 */
import { visibilityOf } from '../../core/visibility.js'
import { KnowHubError } from '../../core/errors.js'
import { KNOWLEDGE_ID } from '../../core/ids.js'
import type { FeedbackRecord, KnowledgeExportLine, KnowledgeType, KnowledgeVersion, Source } from '../../core/knowledge.js'
import { SCOPE_KINDS, type ScopeKind } from '../../core/principal.js'

/** The root file that says what the folder is. */
export const FOLDER_README = 'README.md'
/** The sync state file (the version and text hash of each entry at the last sync). */
export const SYNC_STATE_FILE = '.knowhub-sync.json'
/** The folder of conflict notes (one `<id>.json` per entry changed on both sides). */
export const CONFLICTS_DIR = 'conflicts'
/** Archived and merged entries of a section. */
export const ARCHIVE_FILE = 'archive.json'

/** The file of each type (user_profile: see {@link PROFILE_FILES}). */
const TYPE_FILES: Record<Exclude<KnowledgeType, 'user_profile'>, string> = {
  tool: 'tools.json',
  definition: 'definitions.json',
  plan: 'plans.json',
  strategy: 'strategies.json',
  usecase: 'usecases.json',
}

/** The file of each user_profile `tags.category` (seed 002); any other category goes to `profile.json`. */
const PROFILE_FILES: Record<string, string> = {
  preference: 'preferences.json',
  habit: 'habits.json',
  constraint: 'constraints.json',
  background: 'profile.json',
}

/** The top-level folders, by the scope kind they hold (`org` and `public` share `global/`). */
const SECTION_DIRS: Record<ScopeKind, string> = { user: 'users', project: 'projects', agent: 'agents', team: 'teams', org: 'global' }
const KIND_OF_DIR: Record<string, ScopeKind> = { users: 'user', projects: 'project', agents: 'agent', teams: 'team' }

/** What a file's path says about the entries in it. */
export interface FileMeaning {
  /** The section: a scope kind and id, or `global` (org-wide and public). */
  section: { kind: ScopeKind; id: string } | { kind: 'global' }
  /** The section's folder as the export names it (`users/user_alice`, `global`). */
  dir: string
  /** The type its entries have (undefined for `archive.json`). */
  type: KnowledgeType | undefined
  /** For a user_profile file, its `tags.category` (`profile.json`: background). */
  category: string | undefined
  archive: boolean
}

const SECTION_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/

function priority(candidate: string): number {
  if (candidate === 'public') return SCOPE_KINDS.length
  const kind = candidate.slice(0, candidate.indexOf(':')) as ScopeKind
  const rank = SCOPE_KINDS.indexOf(kind)
  return rank < 0 ? SCOPE_KINDS.length + 1 : rank
}

/**
 * The section folder of an entry (see the rule at the top of this file).
 * @example
 * sectionOf({ scopes: ['org:acme', 'user:alice'], owner: 'user:alice' }) // 'users/user_alice'
 */
export function sectionOf(entry: { scopes: readonly string[]; owner: string }): string {
  let best: string | undefined
  for (const candidate of entry.scopes) if (best === undefined || priority(candidate) < priority(best)) best = candidate
  if (best === undefined || best === 'public') return 'global'
  const at = best.indexOf(':')
  const kind = best.slice(0, at) as ScopeKind
  if (kind === 'org') return 'global'
  const id = best.slice(at + 1)
  return `${SECTION_DIRS[kind]}/${kind === 'user' ? `${USER_DIR_PREFIX}${id}` : id}`
}

/** Seed 002 names a user's folder `user_<id>` (`users/user_123/` holds user:123's profile). */
const USER_DIR_PREFIX = 'user_'

/**
 * The id a section folder's name stands for: `users/user_123` and (as written before issue 41)
 * `users/123` both mean user 123; other sections are named by the id itself.
 * @example
 * sectionIdOf('user', 'user_123') // '123'
 */
export function sectionIdOf(kind: ScopeKind, dir: string): string {
  return kind === 'user' && dir.startsWith(USER_DIR_PREFIX) && dir.length > USER_DIR_PREFIX.length ? dir.slice(USER_DIR_PREFIX.length) : dir
}

/**
 * The file name of an entry in its section.
 * @example
 * fileNameOf({ types: ['user_profile'], tags: { category: 'habit' }, status: 'active' }) // 'habits.json'
 */
export function fileNameOf(entry: { types: readonly KnowledgeType[]; tags: Record<string, unknown>; status: string }): string {
  if (entry.status !== 'active') return ARCHIVE_FILE
  const type = entry.types[0] ?? 'tool'
  if (type !== 'user_profile') return TYPE_FILES[type]
  const category = entry.tags.category
  return (typeof category === 'string' ? PROFILE_FILES[category] : undefined) ?? 'profile.json'
}

/**
 * The one file that holds an entry.
 * @example
 * placeOf(entry) // 'users/user_alice/preferences.json'
 */
export function placeOf(entry: Pick<KnowledgeExportLine, 'scopes' | 'owner' | 'types' | 'tags' | 'status'>): string {
  return `${sectionOf(entry)}/${fileNameOf(entry)}`
}

/** Every file name a section may hold. */
export const SECTION_FILES: readonly string[] = [...new Set([...Object.values(TYPE_FILES), ...Object.values(PROFILE_FILES), ARCHIVE_FILE])].sort()

function unknownFile(path: string, why: string): KnowHubError {
  return new KnowHubError('invalid_import', `${path} is not a file of the knowledge folder: ${why}`, { file: path })
}

/**
 * What a path inside the folder means, or an `invalid_import` error saying why it is not a
 * knowledge file (unknown folder, unknown category file, too deep).
 * @example
 * meaningOf('users/user_alice/habits.json') // { section: { kind: 'user', id: 'alice' }, dir: 'users/user_alice', type: 'user_profile', category: 'habit', … }
 */
export function meaningOf(path: string): FileMeaning {
  const parts = path.split('/')
  const global = parts[0] === 'global'
  const sectionParts = global ? 1 : 2
  if (!global && KIND_OF_DIR[parts[0] ?? ''] === undefined) {
    throw unknownFile(path, `the top-level folders are global/, users/, agents/, projects/, teams/ (and ${CONFLICTS_DIR}/ for sync notes)`)
  }
  if (parts.length !== sectionParts + 1) throw unknownFile(path, global ? 'global/ holds files only' : `expected ${parts[0]}/<id>/<file>.json`)
  const name = parts[sectionParts]!
  if (!SECTION_FILES.includes(name)) throw unknownFile(path, `unknown category file ${name} (a section holds ${SECTION_FILES.join(', ')})`)
  let section: FileMeaning['section'] = { kind: 'global' }
  if (!global) {
    const kind = KIND_OF_DIR[parts[0]!]!
    const id = sectionIdOf(kind, parts[1]!)
    if (!SECTION_ID.test(id)) throw unknownFile(path, `"${id}" is not a valid ${kind} id`)
    section = { kind, id }
  }
  // The section as the export names it (`users/123` is read as, and counted with, `users/user_123`).
  const dir = section.kind === 'global' ? 'global' : section.kind === 'user' ? `users/${USER_DIR_PREFIX}${section.id}` : parts.slice(0, sectionParts).join('/')
  if (name === ARCHIVE_FILE) return { section, dir, type: undefined, category: undefined, archive: true }
  const type = (Object.keys(TYPE_FILES) as (keyof typeof TYPE_FILES)[]).find((t) => TYPE_FILES[t] === name)
  if (type) return { section, dir, type, category: undefined, archive: false }
  const category = Object.keys(PROFILE_FILES).find((c) => PROFILE_FILES[c] === name)
  return { section, dir, type: 'user_profile', category, archive: false }
}

/**
 * What a path of the folder is, by the layout: the README, a sync conflict note
 * (`conflicts/<knowledge id>.json`), or a knowledge file ({@link meaningOf}).
 */
export type LayoutPath = { kind: 'readme' } | { kind: 'conflict-note'; id: string } | { kind: 'knowledge-file'; meaning: FileMeaning }

/**
 * The layout's one rule for paths: `README.md`, `conflicts/<knowledge id>.json`, and the
 * knowledge files of `global/`, `users/<id>/`, `agents/<id>/`, `projects/<id>/`,
 * `teams/<id>/` ({@link SECTION_FILES}, `archive.json` included). Nothing else: no dot-path,
 * no `..`, no backslash, no name outside ASCII letters, digits and `. _ @ + - :`. Reading a
 * folder checks its files with it, and it is all the folder's writer (src/knowledge/folder/disk.ts)
 * ever writes or deletes. Throws `invalid_import` naming the path otherwise.
 * @example
 * layoutPathOf('conflicts/knowledge-20260101120000-abcd.json') // { kind: 'conflict-note', id: 'knowledge-20260101120000-abcd' }
 * layoutPathOf('.git/config') // throws: .git/config is not a file of the knowledge folder: …
 */
export function layoutPathOf(path: string): LayoutPath {
  if (path === FOLDER_README) return { kind: 'readme' }
  if (path.startsWith(`${CONFLICTS_DIR}/`)) {
    const name = path.slice(CONFLICTS_DIR.length + 1)
    const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : ''
    if (!KNOWLEDGE_ID.test(id)) throw unknownFile(path, `${CONFLICTS_DIR}/ holds notes named <knowledge id>.json`)
    return { kind: 'conflict-note', id }
  }
  return { kind: 'knowledge-file', meaning: meaningOf(path) }
}

function layoutKindOf(path: string): LayoutPath['kind'] | undefined {
  try {
    return layoutPathOf(path).kind
  } catch {
    return undefined
  }
}

/**
 * True for a knowledge file of the layout (not the README, not a note).
 * @example
 * isKnowledgeFile('users/alice/habits.json') // true
 */
export const isKnowledgeFile = (path: string): boolean => layoutKindOf(path) === 'knowledge-file'

/**
 * True for a sync conflict note (`conflicts/<knowledge id>.json`).
 * @example
 * isConflictNote('conflicts/knowledge-20260101120000-abcd.json') // true
 */
export const isConflictNote = (path: string): boolean => layoutKindOf(path) === 'conflict-note'

/**
 * A free-form value (tags, feedback cases) with its object keys sorted at every level: JSONB keeps no key order.
 * @example
 * sortedKeys({ b: 1, a: { d: 2, c: 3 } }) // { a: { c: 3, d: 2 }, b: 1 }
 */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key])
  return out
}

function orderedSource(source: Source): Source {
  return {
    name: source.name,
    category: source.category,
    urls: source.urls,
    agent_id: source.agent_id,
    submitted_by: source.submitted_by,
    ...(source.timestamp !== undefined ? { timestamp: source.timestamp } : {}),
    message_id: source.message_id,
    trace_id: source.trace_id,
  }
}

function orderedVersion(v: KnowledgeVersion): KnowledgeVersion {
  return {
    version: v.version,
    task: v.task,
    content: v.content,
    types: v.types,
    tags: sortedKeys(v.tags) as KnowledgeVersion['tags'],
    scopes: v.scopes,
    resource_ids: v.resource_ids,
    reason: v.reason,
    created_at: v.created_at,
  }
}

/**
 * An entry with its keys in the fixed order of the export format (free-form objects sorted).
 * @example
 * JSON.stringify(orderedEntry(entry), null, 2)
 */
export function orderedEntry(e: KnowledgeExportLine): KnowledgeExportLine {
  return {
    id: e.id,
    message_id: e.message_id,
    types: e.types,
    task: e.task,
    tags: sortedKeys(e.tags) as KnowledgeExportLine['tags'],
    scopes: e.scopes,
    owner: e.owner,
    visibility: e.visibility ?? visibilityOf(e.scopes, e.owner),
    content: e.content,
    resource_ids: e.resource_ids,
    source: orderedSource(e.source),
    eval: {
      score: e.eval.score,
      helpful: e.eval.helpful,
      harmful: e.eval.harmful,
      confidence: e.eval.confidence,
      helpful_history: e.eval.helpful_history.map((h) => sortedKeys(h) as FeedbackRecord),
      harmful_history: e.eval.harmful_history.map((h) => sortedKeys(h) as FeedbackRecord),
    },
    status: e.status,
    merged_into: e.merged_into,
    version: e.version,
    created_at: e.created_at,
    updated_at: e.updated_at,
    ...(e.valid_from !== undefined ? { valid_from: e.valid_from } : {}),
    valid_to: e.valid_to,
    superseded_by: e.superseded_by,
    supersedes: e.supersedes,
    expires_at: e.expires_at,
    versions: e.versions.map(orderedVersion),
  }
}

/**
 * JSON text as the folder writes it: 2-space indent, UTF-8 as written (no `\u` escapes beyond JSON's own), a trailing newline.
 * @example
 * jsonText({ a: '中文' }) // '{\n  "a": "中文"\n}\n'
 */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/**
 * The text of one knowledge file: its entries sorted by id (code-point order), each in the
 * fixed key order.
 * @example
 * fileText([entry]) // '[\n  {\n    "id": "knowledge-…",\n …'
 */
export function fileText(entries: readonly KnowledgeExportLine[]): string {
  const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return jsonText(sorted.map(orderedEntry))
}

/**
 * The part of an entry a folder edit changes, as one comparable string: task, content, types,
 * tags, scopes, resources and status. Counters, histories, versions and dates are the store's.
 * @example
 * if (editableKey(fromFile) !== editableKey(stored)) plan.changes.push(…)
 */
export function editableKey(e: Pick<KnowledgeExportLine, 'task' | 'content' | 'types' | 'tags' | 'scopes' | 'resource_ids' | 'status'>): string {
  return JSON.stringify([e.task, e.content, e.types, sortedKeys(e.tags), e.scopes, e.resource_ids, e.status])
}

/** The folder's README.md: what it is and how to import it. The first line marks a folder KnowHub wrote. */
export const README_MARKER = '<!-- knowhub knowledge folder: docs/knowledge-folder.md -->'

/**
 * The text of the folder's README.md (no dates or counts: an unchanged store exports byte-identically).
 * @example
 * files.push({ path: FOLDER_README, text: readmeText() })
 */
export function readmeText(): string {
  return `${README_MARKER}
# Knowledge folder

This folder holds KnowHub knowledge entries as plain JSON files (seed 002's layout), written by
\`knowhub export --layout folder DIR\`. Edit them by hand, review them in pull requests, then:

    knowhub import DIR --dry-run     # the plan: added / changed / unchanged / would archive
    knowhub import DIR               # apply it (a changed entry becomes a new version)
    knowhub sync DIR                 # both ways, keeping .knowhub-sync.json

Layout (one file per entry, chosen by its highest scope: user > project > agent > team > org > public):

- \`global/\`: org-wide and public knowledge
- \`users/user_<id>/\` (user \`<id>\`), \`projects/<id>/\`, \`agents/<id>/\`, \`teams/<id>/\`: knowledge of that user, project, agent or team
- in each: \`tools.json\`, \`definitions.json\`, \`plans.json\`, \`strategies.json\`, \`usecases.json\` (by first type),
  user profiles in \`profile.json\` (background), \`preferences.json\`, \`habits.json\`, \`constraints.json\` (by tags.category),
  archived and merged entries in \`archive.json\`
- \`conflicts/\`: notes left by sync for entries changed on both sides

Each file is a JSON array sorted by id. An entry written without an \`id\` is a new entry: its file gives its
type, category and scope. Secrets are never written: entries name resources by id only.
`
}
