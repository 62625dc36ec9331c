/**
 * The one port of KnowHub acting as one caller: what the CLI, the agent tools, MCP and the agent
 * example call, wherever KnowHub runs. Two adapters implement it: in this process on the built
 * services (`servicesBackend`/`localBackend`, src/app/backend.ts, as a given principal), and over
 * HTTP on the typed client (`clientBackend`, src/client/backend.ts, as the client's token). The
 * callers never know which one they run on.
 *
 * Requests are the HTTP API's JSON (the core schemas' input types); the services parse them, so
 * neither adapter checks or reshapes a request. Failures reject with a `KnowHubError` (string `code`).
 */
import type { AgentConfig } from './config.js'
import { KnowHubError } from './errors.js'
import type { AgentKnowledge, AgentLanguage, AssembleContextInput, AssembledContext, CompactInput, CompactResult, LocalCompactRequest } from './agent.js'
import type { ImportQuery, ImportReport, SupersedeInput, SupersedeResult } from './knowledge.js'
import type { FolderFile, FolderImportQuery, FolderImportReport, FolderSyncInput, FolderSyncResult } from './knowledge-folder.js'
import type { PortOf } from './operation.js'
import type { ADMIN_OPERATIONS, AGENT_OPERATIONS, KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, TOKEN_OPERATIONS, USER_OPERATIONS } from './operations.js'

/** How a JSONL import treats bad lines and existing ids (`POST /api/knowledge/import`'s query), plus its progress. */
export type BackendImportOptions = ImportQuery & {
  /** Progress of the write (in this process only: a server reports when it is done). */
  onProgress?: (done: number, total: number) => void
}

/** Which owner's resource a call means (ids are namespaced by owner); default the caller's, else the one it sees first. */
export interface ResourceTarget {
  owner?: string
}

/**
 * An agent's context or compaction, and where the agent is: `stored` — the agent stored in the
 * hub (its documents in the store, in the caller's org); not stored — its folder on this machine
 * (`~/.agent/NAME/`, or `home`). Left out: where this backend keeps agents (in this process: the
 * folder here; over HTTP or for a remote caller: the stored one).
 */
export type AgentWhere = { stored?: boolean }

/** The agent operations (seed 003's goal tool, seed 004's context and compaction). */
export interface AgentBackend extends PortOf<typeof AGENT_OPERATIONS> {
  /** An agent's assembled starting context. `config`: this machine's agent settings, for a folder read here over HTTP. */
  context(input: AssembleContextInput & AgentWhere, config?: Partial<AgentConfig>): Promise<AssembledContext>
  /** Compacts an agent's history (past the threshold) into its compact memory, and extracts knowledge from it. */
  compact(input: CompactInput & AgentWhere, config?: Partial<AgentConfig>): Promise<CompactResult>
}

/**
 * KnowHub acting as one caller. Every method rejects with a `KnowHubError` on failure.
 * @example
 * const backend: KnowHubBackend = localBackend(hub, hub.config.principal) // or clientBackend(createClient({ token }))
 * const { results } = await backend.knowledge.search({ q: 'selenium login', top_k: 3 })
 */
export interface KnowHubBackend {
  /** The server's URL when the backend runs over HTTP; undefined in this process. */
  readonly url: string | undefined
  /** The operations of the table (src/core/operations.ts), plus the ones it cannot declare (JSONL streams, supersede). */
  readonly knowledge: PortOf<typeof KNOWLEDGE_OPERATIONS> & {
    /** `PUT /api/knowledge/{id}` with `supersede_with` (issue 31): closes entry `id` and links the one that replaces it. */
    supersede(id: string, input: SupersedeInput): Promise<SupersedeResult>
    /** Every visible entry with its history, one JSONL line each. */
    exportJsonl(): AsyncIterable<string>
    /** JSONL as `exportJsonl` writes it; all or nothing unless `mode: 'partial'`. */
    importJsonl(lines: AsyncIterable<string>, options?: BackendImportOptions): Promise<ImportReport>
  }
  /** The caller's knowledge folder (seed 002's layout, docs/knowledge-folder.md). */
  readonly folder: {
    export(): Promise<FolderFile[]>
    /** Adds, new versions for changes, archives removed entries with `prune`; `dry_run` plans only. */
    import(files: FolderFile[], query?: FolderImportQuery): Promise<FolderImportReport>
    /** One sync step (the files and state read here; the folder to write comes back). */
    sync(input: FolderSyncInput): Promise<FolderSyncResult>
  }
  /** The table's resource operations, and the deletion (it says whose resource it was). */
  readonly resources: PortOf<typeof RESOURCE_OPERATIONS> & {
    /** Deletes it for good; says whose it was. */
    delete(id: string, target?: ResourceTarget): Promise<{ owner: string }>
  }
  /** Agents and goal trees; absent: no `goal` or `agent_compact` tool, no `agent-context` MCP prompt. */
  readonly agent?: AgentBackend | undefined
  /** Users' profiles (the user itself, its org admin, the hub operator): the table's `USER_OPERATIONS`. */
  readonly users: PortOf<typeof USER_OPERATIONS>
  /** Administration (the `admin` permission over HTTP; the hub operator in this process): the table's operations, and the backup's bytes. */
  readonly admin: PortOf<typeof ADMIN_OPERATIONS> & {
    /** A backup file of the embedded database; PostgreSQL: a `validation_error` naming pg_dump. */
    backup(): Promise<Uint8Array>
    tokens: PortOf<typeof TOKEN_OPERATIONS>
  }
}

/**
 * A local agent's folder, read by this process while KnowHub runs elsewhere (the CLI beside a
 * server): the HTTP adapter asks the server for knowledge or compaction and keeps the files here.
 * src/app/agent-files.ts implements it; a browser has none.
 */
export interface LocalAgentFiles {
  context(
    input: AssembleContextInput,
    config: Partial<AgentConfig>,
    knowledge: (task: string | undefined, language: AgentLanguage) => Promise<AgentKnowledge>,
  ): Promise<AssembledContext>
  compact(input: CompactInput, config: Partial<AgentConfig>, compactHeld: (body: LocalCompactRequest) => Promise<CompactResult>): Promise<CompactResult>
}

/**
 * `home`/`template` name files on this machine: a stored agent has none (both adapters refuse them, in the CLI's words).
 * @example
 * if (input.stored && input.home !== undefined) throw storedAgentWithFiles(backend.url)
 */
export function storedAgentWithFiles(url: string | undefined): KnowHubError {
  return new KnowHubError(
    'validation_error',
    `--home and --template choose files on this machine; a stored agent lives in the store${url ? ` of the server at ${url}` : ''}: leave them out, or leave out --stored to use the agent folder here`,
  )
}
