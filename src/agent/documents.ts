/**
 * Stored agents (issue #27): on a server, an agent's memory belongs to a principal. An agent
 * is `agent:ID` inside an org; its documents (seed 004's `self_awareness.md`, `knowledge.md`,
 * `compact.md`, the template `system_prompt.md`, the knowledge files it names, and the
 * generated `knowledge_function_index.json`) are versioned rows of the store with an owner and
 * scopes, so backups, copies and every PostgreSQL server behind a balancer carry them.
 *
 * The rules, in one place:
 * - The org is always the caller's own (`''` for a principal without one): another org's
 *   agent is exactly an unknown one (`not_found`).
 * - Reading needs the `read` permission and a scope shared with the document; writing needs
 *   `write` and, for an existing document, a shared scope too.
 * - A new document's scopes are `agent:ID` and the writer's first scope; given scopes must be
 *   the writer's own or `agent:ID` (never `public`). Later versions keep the scopes unless told.
 * - Every write of a knowledge document regenerates the function index (not written by hand).
 * - A server never reads its own disk for a caller: only the shipped defaults (template,
 *   self-awareness) fill in what an agent lacks, shown as `default:<language>/<file>`.
 */
import { join } from 'node:path'
import { z } from 'zod'
import type { Clock } from '../core/clock.js'
import {
  AgentDocumentName,
  AgentName,
  WriteAgentDocumentInput,
  type AgentDocument,
  type AgentDocumentInfo,
  type AgentDocumentList,
  type AgentList,
  type FunctionIndex,
} from '../core/agent.js'
import { KnowHubError } from '../core/errors.js'
import { assertWritableScopes, defaultOwnerOf, defaultWriteScopes, memberScopes, requirePermission, visibleScopes, type Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { AgentDocumentHead, AgentDocumentRecord, AgentDocumentStore } from '../store/agent/agent-documents.js'
import type { MemoryPlace } from './compact.js'
import type { AgentFilesSource, AgentSettings } from './context.js'
import { AGENT_FILES, readTextFile } from './files.js'
import { buildFunctionIndex } from './function-index.js'
import { AGENT_DEFAULTS_DIR } from './labels.js'

/** What the stored-agent operations need. */
export interface AgentDocumentsDeps {
  docs: AgentDocumentStore
  settings: Pick<AgentSettings, 'language' | 'maxFileBytes' | 'defaultsDir'>
  clock: Clock
}

/** Documents that are not knowledge (not indexed): the memory, the template, the index itself. */
const NOT_KNOWLEDGE = new Set<string>([AGENT_FILES.compact, AGENT_FILES.template, AGENT_FILES.functionIndex])

/**
 * The API path of a stored agent's document: what responses show instead of a file path.
 * @example
 * documentPath('book_agent', 'compact.md') // '/api/agents/book_agent/documents/compact.md'
 */
export function documentPath(agent: string, name: string, version?: number): string {
  const path = `/api/agents/${encodeURIComponent(agent)}/documents/${name.split('/').map(encodeURIComponent).join('/')}`
  return version === undefined ? path : `${path}?version=${version}`
}

const orgOf = (principal: Principal): string => principal.org ?? ''

function unknownAgent(agent: string): KnowHubError {
  return new KnowHubError('not_found', `No agent "${agent}" visible to you`, { agent })
}

function unknownDocument(agent: string, name: string): KnowHubError {
  return new KnowHubError('not_found', `No document "${name}" of agent "${agent}" visible to you`, { agent, name })
}

function info(row: AgentDocumentHead): AgentDocumentInfo {
  return {
    agent: row.agent,
    name: row.name,
    version: row.version,
    owner: row.owner,
    scopes: row.scopes,
    bytes: row.bytes,
    written_by: row.written_by,
    created_at: row.created_at.toISOString(),
  }
}

function full(row: AgentDocumentRecord): AgentDocument {
  return { ...info({ ...row, bytes: Buffer.byteLength(row.content, 'utf8') }), content: row.content }
}

/** Who wrote a version, as the records show it: the principal's ids. */
const writerOf = (principal: Principal): string => memberScopes(principal).join(' ') || 'anonymous'

const DocumentQuery = z.strictObject({ version: z.coerce.number().int().min(1).optional() })

function names(agent: unknown, name?: unknown): { agent: string; name: string } {
  const a = parseWith(AgentName, agent, 'agent name')
  return { agent: a, name: name === undefined ? '' : parseWith(AgentDocumentName, name, 'document name') }
}

/** The current documents the caller sees; `not_found` when it sees none (unknown, another org's, or hidden). */
async function visibleAgent(docs: AgentDocumentStore, agent: string, principal: Principal): Promise<AgentDocumentHead[]> {
  const rows = await docs.current(orgOf(principal), agent, visibleScopes(principal))
  if (rows.length === 0) throw unknownAgent(agent)
  return rows
}

/** Refuses a write past the size limit, over scopes the writer does not share, or against another version than expected. */
function assertWritable(
  settings: AgentDocumentsDeps['settings'],
  target: { agent: string; name: string; bytes: number },
  head: { version: number; scopes: string[] } | undefined,
  principal: Principal,
  expected: number | undefined,
): void {
  const { agent, name, bytes } = target
  if (bytes > settings.maxFileBytes) {
    throw new KnowHubError('too_large', `${name} is ${bytes} bytes; the limit is ${settings.maxFileBytes} bytes (agent.maxFileBytes)`, {
      bytes,
      limit: settings.maxFileBytes,
    })
  }
  const visible = visibleScopes(principal)
  if (head && !head.scopes.some((s) => visible.includes(s))) {
    throw new KnowHubError('forbidden', `Document "${name}" of agent "${agent}" exists in your org under scopes you do not share: you cannot write it`, {
      agent,
      name,
    })
  }
  if (expected !== undefined && expected !== (head?.version ?? 0)) {
    throw new KnowHubError('conflict', `Document "${name}" of agent "${agent}" is at version ${head?.version ?? 0}, not ${expected}: read it again`, {
      agent,
      name,
      version: head?.version ?? 0,
    })
  }
}

/** Adds a version (the index regenerated after a knowledge document). */
async function put(
  deps: AgentDocumentsDeps,
  agent: string,
  name: string,
  content: string,
  principal: Principal,
  options: { scopes?: string[]; expected?: number },
): Promise<AgentDocumentRecord> {
  const { docs, clock } = deps
  const org = orgOf(principal)
  const head = await docs.head(org, agent, name)
  assertWritable(deps.settings, { agent, name, bytes: Buffer.byteLength(content, 'utf8') }, head, principal, options.expected)
  if (options.scopes)
    assertWritableScopes(
      principal,
      options.scopes.filter((s) => s !== `agent:${agent}`),
    )
  const scopes = options.scopes ?? head?.scopes ?? [...new Set([`agent:${agent}`, ...defaultWriteScopes(principal)])]
  const record: AgentDocumentRecord = {
    org,
    agent,
    name,
    version: (head?.version ?? 0) + 1,
    content,
    owner: head?.owner ?? defaultOwnerOf(principal) ?? `agent:${agent}`,
    scopes: [...new Set(scopes)],
    written_by: writerOf(principal),
    created_at: clock.now(),
  }
  if (!(await docs.insert(record))) {
    throw new KnowHubError('conflict', `Document "${name}" of agent "${agent}" was written by someone else at the same time: read it again`, { agent, name })
  }
  if (!NOT_KNOWLEDGE.has(name) && name.endsWith('.md')) await reindex(deps, agent, principal, record.scopes)
  return record
}

/** The shipped default of a fixed file, shown as `default:<language>/<file>`. */
async function shippedDefault(settings: AgentDocumentsDeps['settings'], file: string): Promise<{ ref: string; text: string } | undefined> {
  const text = await readTextFile(join(settings.defaultsDir ?? AGENT_DEFAULTS_DIR, settings.language, file), settings.maxFileBytes)
  return text === undefined ? undefined : { ref: `default:${settings.language}/${file}`, text }
}

/**
 * The texts the function index is built from: the self-awareness file (else the shipped
 * default), `knowledge.md`, then the other knowledge documents — only those every reader of the
 * index may read (scopes covering `scopes`).
 */
async function indexSources(deps: AgentDocumentsDeps, agent: string, principal: Principal, all: AgentDocumentHead[], scopes: string[]) {
  const sources: Array<{ path: string; text: string }> = []
  const own = all.find((d) => d.name === AGENT_FILES.selfAwareness)
  const readable = (d: AgentDocumentHead) => scopes.every((s) => d.scopes.includes(s))
  const candidates = all.filter((d) => !NOT_KNOWLEDGE.has(d.name) && d.name.endsWith('.md') && readable(d))
  if (!own || !readable(own)) {
    const fallback = await shippedDefault(deps.settings, AGENT_FILES.selfAwareness)
    if (fallback) sources.push({ path: fallback.ref, text: fallback.text })
  }
  const ordered = [
    ...candidates.filter((d) => d.name === AGENT_FILES.selfAwareness),
    ...candidates.filter((d) => d.name === AGENT_FILES.knowledge),
    ...candidates.filter((d) => d.name !== AGENT_FILES.selfAwareness && d.name !== AGENT_FILES.knowledge),
  ]
  for (const d of ordered) {
    const row = await deps.docs.get(orgOf(principal), agent, d.name, visibleScopes(principal))
    if (row) sources.push({ path: row.name, text: row.content })
  }
  return sources
}

/**
 * Regenerates the stored function index: its scopes are `knowledge.md`'s (else the written
 * document's), and it lists only documents every reader of the index may read (scopes
 * covering the index's), so it never tells anyone of a function they could not read.
 */
async function reindex(deps: AgentDocumentsDeps, agent: string, principal: Principal, writtenScopes: string[]): Promise<void> {
  const { docs, clock } = deps
  const org = orgOf(principal)
  const all = await docs.current(org, agent, visibleScopes(principal))
  const scopes = all.find((d) => d.name === AGENT_FILES.knowledge)?.scopes ?? writtenScopes
  const index: FunctionIndex = buildFunctionIndex(agent, await indexSources(deps, agent, principal, all, scopes), clock.now())
  const head = await docs.head(org, agent, AGENT_FILES.functionIndex)
  await docs.insert({
    org,
    agent,
    name: AGENT_FILES.functionIndex,
    version: (head?.version ?? 0) + 1,
    content: `${JSON.stringify(index, null, 2)}\n`,
    owner: head?.owner ?? defaultOwnerOf(principal) ?? `agent:${agent}`,
    scopes,
    written_by: 'knowhub (generated)',
    created_at: clock.now(),
  })
}

/** The reading operations: the agents, a document's current version (or one named), its versions. */
function readOperations(docs: AgentDocumentStore) {
  return {
    /** `GET /api/agents`: the agents of the caller's org it may see. */
    async list(principal: Principal): Promise<AgentList> {
      requirePermission(principal, 'read')
      const rows = await docs.agents(orgOf(principal), visibleScopes(principal))
      return { agents: rows.map((r) => ({ agent: r.agent, documents: r.documents, updated_at: r.updated_at.toISOString() })) }
    },

    /** `GET /api/agents/{agent}/documents`: the current version of each document it may see. */
    async documents(agent: unknown, principal: Principal): Promise<AgentDocumentList> {
      requirePermission(principal, 'read')
      const n = names(agent)
      return { agent: n.agent, documents: (await visibleAgent(docs, n.agent, principal)).map(info) }
    },

    /** `GET /api/agents/{agent}/documents/{name}[?version=N]`. */
    async get(agent: unknown, name: unknown, query: unknown, principal: Principal): Promise<AgentDocument> {
      requirePermission(principal, 'read')
      const n = names(agent, name)
      const { version } = parseWith(DocumentQuery, query ?? {}, 'document query')
      const row = await docs.get(orgOf(principal), n.agent, n.name, visibleScopes(principal), version)
      if (!row) throw unknownDocument(n.agent, n.name)
      return full(row)
    },

    /** `GET /api/agents/{agent}/versions/{name}`: every version, newest first (no content). */
    async versions(agent: unknown, name: unknown, principal: Principal): Promise<AgentDocumentList> {
      requirePermission(principal, 'read')
      const n = names(agent, name)
      const rows = await docs.versions(orgOf(principal), n.agent, n.name, visibleScopes(principal))
      if (rows.length === 0) throw unknownDocument(n.agent, n.name)
      return { agent: n.agent, documents: rows.map(info) }
    },
  }
}

/** `PUT /api/agents/{agent}/documents/{name}`: a new version (the function index is generated, never written). */
async function writeDocument(deps: AgentDocumentsDeps, agent: unknown, name: unknown, body: unknown, principal: Principal): Promise<AgentDocumentInfo> {
  requirePermission(principal, 'write')
  const n = names(agent, name)
  const input = parseWith(WriteAgentDocumentInput, body, 'agent document')
  if (n.name === AGENT_FILES.functionIndex) {
    throw new KnowHubError('validation_error', `${AGENT_FILES.functionIndex} is generated from the knowledge documents at each write: write those instead`, {
      issues: [{ path: ['name'], message: 'generated document' }],
    })
  }
  const record = await put(deps, n.agent, n.name, input.content, principal, {
    ...(input.scopes ? { scopes: input.scopes } : {}),
    ...(input.expected_version !== undefined ? { expected: input.expected_version } : {}),
  })
  return info({ ...record, bytes: Buffer.byteLength(record.content, 'utf8') })
}

/**
 * A stored agent's files as a source for the context assembly, as `principal` sees them
 * (`not_found` when it sees no document of the agent). Reads only: the index it reports is
 * the stored document's path.
 */
async function storedSource(docs: AgentDocumentStore, agent: string, principal: Principal): Promise<AgentFilesSource> {
  const org = orgOf(principal)
  const visible = visibleScopes(principal)
  await visibleAgent(docs, agent, principal)
  const read = async (name: string) => {
    const row = await docs.get(org, agent, name, visible)
    return row ? { ref: row.name, text: row.content } : undefined
  }
  return {
    kind: 'store',
    read,
    async readNamed(name) {
      const parsed = AgentDocumentName.safeParse(name)
      if (!parsed.success) {
        throw new KnowHubError('validation_error', `Knowledge file "${name}" is refused: ${parsed.error.issues[0]?.message ?? 'bad name'}`, {
          issues: [{ path: ['knowledge_files'], message: 'not a document name' }],
          file: name,
        })
      }
      const found = await read(parsed.data)
      if (!found) throw new KnowHubError('not_found', `Knowledge file "${name}" is not a document of agent "${agent}" visible to you`, { file: name })
      return found
    },
    defaultRef: (language, file) => `default:${language}/${file}`,
    writeIndex: async () => ({ path: documentPath(agent, AGENT_FILES.functionIndex), written: false }),
  }
}

/**
 * A stored agent's compact memory for compaction: `compact.md` (the previous memory stays as
 * its previous version). `not_found` when the caller sees no document of the agent.
 */
async function storedMemory(deps: AgentDocumentsDeps, agent: string, principal: Principal): Promise<MemoryPlace> {
  requirePermission(principal, 'write')
  await visibleAgent(deps.docs, agent, principal)
  const org = orgOf(principal)
  return {
    async previous() {
      return (await deps.docs.get(org, agent, AGENT_FILES.compact, visibleScopes(principal)))?.content
    },
    async save(summary) {
      const record = await put(deps, agent, AGENT_FILES.compact, `${summary}\n`, principal, {})
      return {
        memory_path: documentPath(agent, AGENT_FILES.compact),
        ...(record.version > 1 ? { previous_version: documentPath(agent, AGENT_FILES.compact, record.version - 1) } : {}),
      }
    },
  }
}

/**
 * The stored-agent operations (see the module comment). Create with the store's queries.
 * @example
 * const agents = createAgentDocuments({ docs: agentDocumentStore(store.db), settings, clock })
 * await agents.write('book_agent', 'knowledge.md', { content: '## @learning\nContract: …' }, principal)
 */
export function createAgentDocuments(deps: AgentDocumentsDeps) {
  return {
    ...readOperations(deps.docs),
    /** `PUT /api/agents/{agent}/documents/{name}`: a new version (the function index is generated, never written). */
    write: (agent: unknown, name: unknown, body: unknown, principal: Principal): Promise<AgentDocumentInfo> =>
      writeDocument(deps, agent, name, body, principal),
    /** A stored agent's files as a source for the context assembly, as `principal` sees them. */
    source: (agent: string, principal: Principal): Promise<AgentFilesSource> => storedSource(deps.docs, agent, principal),
    /** A stored agent's compact memory for compaction (`compact.md`). */
    memory: (agent: string, principal: Principal): Promise<MemoryPlace> => storedMemory(deps, agent, principal),
  }
}

/** The stored-agent operations. */
export type AgentDocuments = ReturnType<typeof createAgentDocuments>
