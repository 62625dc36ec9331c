/**
 * What a one-shot command does with KnowHub, wherever KnowHub runs: a `HubSession` is the
 * knowledge, resource, slim, status, token and reown operations acting as one caller — in this process on
 * an open hub (`localSession`, as the config's principal), or over HTTP on a running server
 * (`serverSession`, as the token's principal, or the server's local principal with its
 * local key). The CLI picks one (src/cli/context.ts); its commands never know which.
 */
import type { AgentConfig } from '../core/config.js'
import type { AssembleContextInput, AssembledContext, CompactInput, CompactResult } from '../core/agent.js'
import type { HubStatus } from '../core/api.js'
import { KnowHubError } from '../core/errors.js'
import { ExtractInput, type ExtractResult } from '../core/extract.js'
import type {
  EditKnowledgeInput,
  FeedbackInput,
  ImportReport,
  KnowledgeEntry,
  KnowledgeListPage,
  KnowledgeVersion,
  ReownInput,
  ReownResult,
  SaveKnowledgeInput,
  SearchResponse,
} from '../core/knowledge.js'
import type { FolderFile, FolderImportReport, FolderSyncInput, FolderSyncResult } from '../core/knowledge-folder.js'
import type { FolderImportOptions } from '../knowledge/service.js'
import type { Resource, ResourceListPage, SaveResourceInput, UpdateResourceInput } from '../core/resources.js'
import type { SlimResult, UnmergeResult } from '../core/slim.js'
import type { CreatedToken, CreateTokenInput, TokenInfo } from '../core/tokens.js'
import { toKnowHubError } from '../client/backend.js'
import type { KnowHubClient, ListKnowledgeQuery, ListResourcesQuery, SearchQuery, SlimOptions } from '../client/client.js'
import { parseWith } from '../core/validate.js'
import { AgentConfig as AgentConfigSchema } from '../core/config.js'
import type { KnowHub } from './open.js'

/** How an import treats bad lines and existing ids (see `ImportOptions` of the knowledge service). */
export interface SessionImportOptions {
  mode?: 'atomic' | 'partial'
  onConflict?: 'error' | 'skip' | 'replace'
  /** Progress of the write (in-process only: a server reports when it is done). */
  onProgress?: (done: number, total: number) => void
}

/** The operations of the one-shot CLI, acting as one caller. Failures reject with a `KnowHubError`. */
export interface HubSession {
  /** The server's URL when the session runs over HTTP; undefined in this process. */
  readonly url: string | undefined
  readonly knowledge: {
    save(body: SaveKnowledgeInput): Promise<KnowledgeEntry>
    search(query: Omit<SearchQuery, 'expand'>): Promise<SearchResponse>
    list(query: Omit<ListKnowledgeQuery, 'expand'>): Promise<KnowledgeListPage>
    get(id: string): Promise<KnowledgeEntry>
    versions(id: string): Promise<KnowledgeVersion[]>
    feedback(id: string, body: FeedbackInput): Promise<KnowledgeEntry>
    edit(id: string, body: EditKnowledgeInput): Promise<KnowledgeEntry>
    archive(id: string): Promise<KnowledgeEntry>
    restore(id: string): Promise<KnowledgeEntry>
    delete(id: string): Promise<void>
    /** Every visible entry with its history, one JSONL line each. */
    exportJsonl(): AsyncIterable<string>
    importJsonl(lines: AsyncIterable<string>, options?: SessionImportOptions): Promise<ImportReport>
    /** The caller's knowledge folder (seed 002's layout) as files (docs/knowledge-folder.md). */
    exportFolder(): Promise<FolderFile[]>
    /** Imports a knowledge folder's files (plan only with `dryRun`). */
    importFolder(files: FolderFile[], options?: FolderImportOptions): Promise<FolderImportReport>
    /** One sync step with a knowledge folder (the files and state read here; the folder to write comes back). */
    syncFolder(input: FolderSyncInput): Promise<FolderSyncResult>
    /** Knowledge from a conversation (the `POST /api/knowledge/extract` body, checked here or by the server). */
    extract(body: unknown): Promise<ExtractResult>
  }
  /** Resources (ids are namespaced by owner: `owner` picks one owner's; default the caller's, else the one it sees first). */
  readonly resources: {
    /** Creates, or updates the owner's resource with this id (`created` says which). */
    save(input: SaveResourceInput): Promise<{ resource: Resource; created: boolean }>
    update(id: string, input: UpdateResourceInput, target?: { owner?: string }): Promise<Resource>
    get(id: string, options?: { includeSecret?: boolean; owner?: string }): Promise<Resource>
    list(query: ListResourcesQuery): Promise<ResourceListPage>
    /** Deletes it for good; says whose it was. */
    delete(id: string, target?: { owner?: string }): Promise<{ owner: string }>
  }
  readonly slim: {
    slim(input: SlimOptions): Promise<SlimResult>
    unmerge(id: string): Promise<UnmergeResult>
  }
  /** API tokens (needs the `admin` permission over HTTP). */
  readonly tokens: {
    create(input: CreateTokenInput): Promise<CreatedToken>
    list(): Promise<TokenInfo[]>
    revoke(id: string): Promise<TokenInfo>
  }
  /**
   * An agent's assembled starting context (seed 004). A local agent (the default): its folder on
   * this machine (`~/.agent/NAME/`, or `home`), read by this process, with knowledge and packs
   * from wherever the session runs. `stored`: the agent stored on the server in the caller's org
   * (`home` and `template` then refused). `config`: the agent settings of this machine.
   */
  agentContext(input: AssembleContextInput & { stored?: boolean }, config?: Partial<AgentConfig>): Promise<AssembledContext>
  /**
   * Compacts an agent's history (seed 004): a local agent's memory in its folder on this
   * machine (over HTTP the server's LLM summarises, the memory stays here); `stored`: a stored agent's.
   */
  agentCompact(input: CompactInput & { stored?: boolean }, config?: Partial<AgentConfig>): Promise<CompactResult>
  /** Re-owns or shares every entry of one owner (needs the `admin` permission). */
  reown(input: ReownInput): Promise<ReownResult>
  /** Database, embedder, entries, and who is asking. */
  status(): Promise<HubStatus>
  /** A backup file of the embedded database (needs `admin` over HTTP); PostgreSQL: a `validation_error` naming pg_dump. */
  backup(): Promise<Uint8Array>
}

/**
 * The session of an open hub, acting as its configured principal.
 * @example
 * const hub = await openKnowHub(config)
 * const session = localSession(hub)
 * await session.knowledge.search({ q: 'selenium login' })
 */
export function localSession(hub: KnowHub): HubSession {
  const { knowledge, slim, tokens } = hub
  const me = hub.config.principal
  return {
    url: undefined,
    knowledge: {
      save: (body) => knowledge.save(body, me),
      search: (query) => knowledge.search(query, me),
      list: (query) => knowledge.list(query, me),
      get: (id) => knowledge.get(id, me),
      versions: (id) => knowledge.versions(id, me),
      feedback: (id, body) => knowledge.feedback(id, body, me),
      edit: (id, body) => knowledge.edit(id, body, me),
      archive: (id) => knowledge.archive(id, me),
      restore: (id) => knowledge.restore(id, me),
      delete: (id) => knowledge.delete(id, me),
      exportJsonl: () => knowledge.exportJsonl(me),
      importJsonl: (lines, options = {}) => knowledge.importJsonl(lines, me, options),
      exportFolder: () => knowledge.exportFolder(me),
      importFolder: (files, options = {}) => knowledge.importFolder(files, me, options),
      syncFolder: (input) => knowledge.syncFolder(input, me),
      extract: (body) => hub.extraction.extract(body, me),
    },
    resources: {
      save: (input) => hub.resources.upsert(input, me),
      update: (id, input, target = {}) => hub.resources.update(id, input, me, target),
      get: (id, options = {}) => hub.resources.get(id, me, { ...options, site: { via: 'cli', route: 'knowhub resource get', caller: 'local' } }),
      list: (query) => hub.resources.list(query, me),
      delete: (id, target = {}) => hub.resources.delete(id, me, target),
    },
    slim: { slim: (input) => slim.slim(input, me), unmerge: (id) => slim.unmerge(id, me) },
    tokens: { create: (input) => tokens.create(input), list: () => tokens.list(), revoke: (id) => tokens.revoke(id) },
    agentContext: ({ stored, ...input }) => hub.agent.assembleContext({ ...input, principal: me, ...(stored ? { remote: true } : {}) }),
    agentCompact: ({ stored, ...input }) => {
      if (!stored) return hub.agent.compact(input, me)
      const { agent, home, ...rest } = input
      if (home !== undefined) throw storedWithFiles(undefined)
      return hub.agent.compactStored(agent, rest, me)
    },
    reown: (input) => knowledge.reown(input, me),
    status: () => hub.status(),
    // Loaded on use: the backup code (store, zlib, migrations) is no part of a session on a server.
    backup: async () => (await import('../admin/backup.js')).backupHub(hub),
  }
}

/** `--home`/`--template` name files on this machine: a stored agent has none. */
function storedWithFiles(url: string | undefined): KnowHubError {
  return new KnowHubError(
    'validation_error',
    `--home and --template choose files on this machine; a stored agent lives in the store${url ? ` of the server at ${url}` : ''}: leave them out, or leave out --stored to use the agent folder here`,
  )
}

async function mapped<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw toKnowHubError(error)
  }
}

async function collectLines(lines: AsyncIterable<string>): Promise<string> {
  const all: string[] = []
  for await (const line of lines) all.push(line)
  return all.join('\n')
}

/**
 * The session of a running server, through the typed client (as the client's token).
 * @example
 * const session = serverSession(createClient({ baseUrl: 'http://127.0.0.1:8420', token }))
 * await session.knowledge.search({ q: 'selenium login' })
 */
export function serverSession(client: KnowHubClient): HubSession {
  const k = client.knowledge
  return {
    url: client.baseUrl,
    knowledge: {
      save: (body) => mapped(() => k.save(body)),
      search: (query) => mapped(() => k.search(query)),
      list: (query) => mapped(() => k.list(query)),
      get: (id) => mapped(() => k.get(id)),
      versions: async (id) => (await mapped(() => k.versions(id))).versions,
      feedback: (id, body) => mapped(() => k.update(id, body)),
      edit: (id, body) => mapped(() => k.edit(id, body)),
      archive: (id) => mapped(() => k.archive(id)),
      restore: (id) => mapped(() => k.restore(id)),
      delete: async (id) => void (await mapped(() => k.delete(id))),
      exportJsonl: async function* () {
        const text = await mapped(() => k.exportJsonl())
        for (const line of text.split('\n')) if (line.trim() !== '') yield line
      },
      importJsonl: async (lines, options = {}) => {
        const jsonl = await collectLines(lines)
        return mapped(() => k.importJsonl(jsonl, { mode: options.mode ?? 'atomic', on_conflict: options.onConflict ?? 'error' }))
      },
      exportFolder: async () => (await mapped(() => client.folder.export())).files,
      importFolder: (files, options = {}) =>
        mapped(() => client.folder.import(files, { dry_run: options.dryRun ?? false, partial: options.partial ?? false, prune: options.prune ?? false })),
      syncFolder: (input) => mapped(() => client.folder.sync(input)),
      extract: async (body) => {
        const input = parseWith(ExtractInput, body, 'extraction request')
        return mapped(() => k.extract(input))
      },
    },
    resources: {
      // A resource is created at version 1; saving over an existing one raises its version.
      save: async (input) => {
        const resource = await mapped(() => client.resources.save(input))
        return { resource, created: resource.version === 1 }
      },
      update: (id, input, target = {}) => mapped(() => client.resources.update(id, input, target)),
      get: (id, options = {}) => mapped(() => client.resources.get(id, options)),
      list: (query) => mapped(() => client.resources.list(query)),
      // The API's answer does not name the owner: find the resource first, then delete exactly that one.
      delete: async (id, target = {}) => {
        const { owner } = await mapped(() => client.resources.get(id, { includeSecret: false, ...target }))
        await mapped(() => client.resources.delete(id, { owner }))
        return { owner }
      },
    },
    slim: { slim: (input) => mapped(() => k.slim(input)), unmerge: (id) => mapped(() => k.unmerge(id)) },
    tokens: {
      create: (input) => mapped(() => client.admin.tokens.create(input)),
      list: () => mapped(() => client.admin.tokens.list()),
      revoke: (id) => mapped(() => client.admin.tokens.revoke(id)),
    },
    agentContext: async ({ stored, ...input }, config = {}) => {
      if (!stored) {
        const { assembleLocalContext } = await import('./agent-files.js')
        return assembleLocalContext({ agent: parseWith(AgentConfigSchema, config, 'agent config') }, input, (task, language) =>
          mapped(() => client.agent.knowledge({ ...(task !== undefined ? { task } : {}), language })),
        )
      }
      const { home, template, knowledgeFiles, ...rest } = input
      if (home !== undefined || template !== undefined) throw storedWithFiles(client.baseUrl)
      return mapped(() => client.agent.context({ ...rest, ...(knowledgeFiles && knowledgeFiles.length > 0 ? { knowledge_files: knowledgeFiles } : {}) }))
    },
    agentCompact: async ({ stored, ...input }, config = {}) => {
      if (!stored) {
        const { compactLocalAgent } = await import('./agent-files.js')
        return compactLocalAgent({ agent: parseWith(AgentConfigSchema, config, 'agent config') }, input, (body) => mapped(() => client.agent.compactHeld(body)))
      }
      const { agent, home, ...rest } = input
      if (home !== undefined) throw storedWithFiles(client.baseUrl)
      return mapped(() => client.agent.compact(agent, rest))
    },
    reown: (input) => mapped(() => client.admin.reown(input)),
    status: () => mapped(() => client.admin.status()),
    // A large database takes a while to dump and send: ten minutes, no retry of a half-sent body.
    backup: () => mapped(() => client.admin.backup({ timeoutMs: 600_000 })),
  }
}
