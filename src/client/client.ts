/**
 * `createClient`: a typed client for every endpoint of the KnowHub HTTP API.
 * Requests are typed with the server's input schemas (`z.input`), responses are
 * validated with its output schemas; every failure is a {@link KnowHubClientError}.
 */
import { z } from 'zod'
import {
  AgentDocument,
  AgentDocumentInfo,
  AgentDocumentList,
  AgentKnowledge,
  AgentList,
  AssembledContext,
  CompactResult,
  type AgentContextRequest,
  type AgentKnowledgeRequest,
  type CompactRequest,
  type LocalCompactRequest,
  type WriteAgentDocumentInput,
} from '../core/agent.js'
import { Deleted, Health, OpenApiDocument } from '../core/api.js'
import type { FeedbackInput, ListInput, SearchInput, SupersedeInput, SupersedeResult } from '../core/knowledge.js'
import type { ImportQuery } from '../core/knowledge.js'
import { ImportReport, type KnowledgeEntryView } from '../core/knowledge.js'
import type { ListResourcesInput } from '../core/resources.js'
import { resourceIdProblem } from '../core/resources.js'
import type { SlimInput } from '../core/slim.js'
import { KnowHubClientError } from './errors.js'
import { folderCalls } from './folder.js'
import { clientCalls } from './operations.js'
import { ADMIN_OPERATIONS, AGENT_OPERATIONS, KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, TOKEN_OPERATIONS, USER_OPERATIONS } from '../core/operations.js'
import { fetchRequester, send, type CallOptions, type FetchLike, type RequestSpec, type Requester, type RetryOptions, type TransportOptions } from './http.js'

/**
 * The server's default address (`knowhub start`).
 * @example
 * createClient() // talks to DEFAULT_BASE_URL
 */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8420'
/**
 * Default timeout of each attempt, in ms.
 * @example
 * createClient({ timeoutMs: DEFAULT_TIMEOUT_MS * 2 })
 */
export const DEFAULT_TIMEOUT_MS = 30_000

export interface ClientOptions {
  /** Where the server is (default `http://127.0.0.1:8420`); may include a path prefix behind a proxy. */
  baseUrl?: string
  /** An API token from `knowhub token create` (sent as `Authorization: Bearer …`); none in local mode. */
  token?: string
  /** Timeout of each attempt in ms (default 30000). */
  timeoutMs?: number
  /** Retries of idempotent calls (see {@link RetryOptions}); `false` turns them off. */
  retry?: RetryOptions | false
  /** Another `fetch` (a proxy agent, a test server's, a mock transport). Default: the global one. */
  fetch?: FetchLike
  /** Headers sent with every request. */
  headers?: Record<string, string>
  /** Check response bodies against the API schemas (default true). */
  validateResponses?: boolean
}

/** Ask for referenced resources along with entries (never their secrets). */
export interface ExpandOption {
  expand?: 'resources'
}

/**
 * The query of `GET /api/knowledge/search` (seed 003: `q`, `top_k` 5, `min_score` 3,
 * `types` as a list or comma-separated), plus KnowHub's `explain`, `mode` and `rerank`.
 */
export type SearchQuery = Omit<SearchInput, 'top_k' | 'min_score'> & { top_k?: number; min_score?: number } & ExpandOption

/** The query of `GET /api/knowledge`: newest first, `limit` 10 by default; active entries unless `status` says otherwise. */
export type ListKnowledgeQuery = Omit<ListInput, 'limit'> & { limit?: number } & ExpandOption

/** The query of `GET /api/resource`: `limit` 20 by default; lists may be arrays or comma-separated. */
export type ListResourcesQuery = Omit<ListResourcesInput, 'limit' | 'content_type' | 'scopes' | 'expired'> & {
  limit?: number
  content_type?: string[] | string
  scopes?: string[] | string
  expired?: boolean
}

/** The body of `POST /api/knowledge/slim` (`model` is accepted for seed 003 compatibility). */
export type SlimOptions = Omit<SlimInput, 'threshold' | 'min_overlap' | 'dry_run' | 'limit'> & {
  threshold?: number
  min_overlap?: number
  dry_run?: boolean
  limit?: number
}

/** Which owner's resource a call means (`?owner=kind:id`; ids are namespaced by owner). Default: the caller's, else the one it sees first. */
export interface ResourceTargetOptions extends CallOptions {
  owner?: string
}

/** Options of `resources.get`. */
export interface GetResourceOptions extends ResourceTargetOptions {
  /** Ask for `secure_body` (default true; shown only with `secrets:read` in the resource's scope). */
  includeSecret?: boolean
}

/**
 * Encodes a path-like resource id for the URL, one segment at a time, after checking it
 * (a `..` segment would otherwise be resolved by URL parsing before the request leaves).
 * @example
 * resourcePath('code/selenium/login') // 'code/selenium/login'
 * resourcePath('x/a b') // throws validation_error (spaces are not allowed in ids)
 */
export function resourcePath(id: string): string {
  const problem = resourceIdProblem(id)
  if (problem) throw new KnowHubClientError('validation_error', `Invalid resource id: ${problem}`, { details: { issues: [{ path: 'id', message: problem }] } })
  return id.split('/').map(encodeURIComponent).join('/')
}

function callOptions<T extends CallOptions>(options: T | undefined): CallOptions {
  if (!options) return {}
  const { signal, timeoutMs, retries, headers, requestId } = options
  return { signal, timeoutMs, retries, headers, requestId } as CallOptions
}

/** Sends one call over a transport, validated with its response schema. */
type Call = <T>(spec: RequestSpec<T>, opts?: CallOptions) => Promise<T>

/** The transport settings of a client: the options with their defaults filled in. */
function transportOf(options: Omit<ClientOptions, 'fetch'>, request: Requester): TransportOptions {
  const retry = options.retry === false ? { retries: 0 } : (options.retry ?? {})
  return {
    baseUrl: (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    token: options.token,
    request,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retry: {
      retries: retry.retries ?? 2,
      baseDelayMs: retry.baseDelayMs ?? 250,
      maxDelayMs: retry.maxDelayMs ?? 4000,
      maxRetryAfterMs: retry.maxRetryAfterMs ?? 30_000,
    },
    headers: { ...options.headers },
    validateResponses: options.validateResponses ?? true,
  }
}

/** The `/api/knowledge` calls: the operations table's (src/core/operations.ts), and the ones it cannot declare. */
function knowledgeCalls(call: Call) {
  const knowledge = {
    ...clientCalls(call, KNOWLEDGE_OPERATIONS),
    /**
     * Every entry matching `query`, page after page (`limit` is the page size).
     * @example
     * for await (const entry of kh.knowledge.listAll({ types: ['tool'], limit: 100 })) console.log(entry.id)
     */
    listAll: async function* (query: Omit<ListKnowledgeQuery, 'cursor'> = {}, opts?: CallOptions): AsyncGenerator<KnowledgeEntryView> {
      let cursor: string | undefined
      do {
        const page = await knowledge.list({ ...query, ...(cursor ? { cursor } : {}) }, opts)
        yield* page.items
        cursor = page.next_cursor ?? undefined
      } while (cursor)
    },
    /**
     * Supersedes entry `id` (issue 31; `PUT /api/knowledge/{id}` with `supersede_with`): `by` is the
     * id of the entry that holds now, or a new entry's body (saved in the same transaction);
     * `valid_to`, when the old one stopped being true. Owner or admin of both.
     * @example
     * const { superseded, current } = await kh.knowledge.supersede(oldId, { by: newId })
     */
    supersede: async (id: string, input: SupersedeInput, opts?: CallOptions): Promise<SupersedeResult> => {
      const body: FeedbackInput = { supersede_with: input.by, ...(input.valid_to ? { valid_to: input.valid_to } : {}) }
      const { current, suggest: _suggest, ...superseded } = await knowledge.update(id, body, opts)
      if (!current) throw new KnowHubClientError('internal_error', 'The server answered a supersession without the entry that supersedes', {})
      return { superseded, current }
    },
    /** `GET /api/knowledge/export`: every visible entry with its history, as JSONL (one entry a line). */
    exportJsonl: async (opts?: CallOptions) =>
      call({ method: 'GET', path: '/api/knowledge/export', retry: 'idempotent', schema: z.string(), responseText: 'application/x-ndjson' }, opts),
    /** `POST /api/knowledge/import`: JSONL as `exportJsonl` writes it; all or nothing unless `mode: 'partial'`. */
    importJsonl: async (jsonl: string, query: ImportQuery = {}, opts?: CallOptions) =>
      call(
        {
          method: 'POST',
          path: '/api/knowledge/import',
          query: { ...query },
          body: jsonl,
          contentType: 'application/x-ndjson',
          retry: 'unsafe',
          schema: ImportReport,
        },
        opts,
      ),
  }
  return knowledge
}

/** The `/api/resource` calls: the operations table's, and the deletion. */
function resourceCalls(call: Call) {
  return {
    ...clientCalls(call, RESOURCE_OPERATIONS),
    /** `DELETE /api/resource/{id}` (owner or admin). Answers `{ id, deleted }` (the server's `owner` is not passed on). */
    delete: async (id: string, opts?: ResourceTargetOptions) =>
      call({ method: 'DELETE', path: `/api/resource/${resourcePath(id)}`, query: { owner: opts?.owner }, retry: 'idempotent', schema: Deleted }, opts),
  }
}

/** The path of a stored agent's document (each segment encoded). */
function documentPathOf(agent: string, name: string): string {
  return `${encodeURIComponent(agent)}/documents/${name.split('/').map(encodeURIComponent).join('/')}`
}

/** The agent calls: the assembled context (seed 004), stored agents' documents and compaction, goal trees (seed 003). */
function agentCalls(call: Call) {
  return {
    ...clientCalls(call, AGENT_OPERATIONS),
    /** `POST /api/agent/context`: the starting context of an agent stored in the caller's org (messages + budget report). */
    context: async (input: AgentContextRequest, opts?: CallOptions) =>
      call({ method: 'POST', path: '/api/agent/context', body: input, retry: 'idempotent', schema: AssembledContext }, opts),
    /** `POST /api/agent/knowledge`: KnowHub's part of a context assembled from a local agent folder (profile, related entries, packs). */
    knowledge: async (input: AgentKnowledgeRequest = {}, opts?: CallOptions) =>
      call({ method: 'POST', path: '/api/agent/knowledge', body: input, retry: 'idempotent', schema: AgentKnowledge }, opts),
    /** `POST /api/agent/compact`: compacts a history whose memory the caller keeps (the new memory is answered; nothing stored). */
    compactHeld: async (input: LocalCompactRequest, opts?: CallOptions) =>
      call({ method: 'POST', path: '/api/agent/compact', body: input, retry: 'unsafe', schema: CompactResult }, opts),
    /** `GET /api/agents`: the stored agents of the caller's org it may see. */
    list: async (opts?: CallOptions) => call({ method: 'GET', path: '/api/agents', retry: 'idempotent', schema: AgentList }, opts),
    /** `GET /api/agents/{agent}/documents`: the current version of each document the caller may see. */
    documents: async (agent: string, opts?: CallOptions) =>
      call({ method: 'GET', path: `/api/agents/${encodeURIComponent(agent)}/documents`, retry: 'idempotent', schema: AgentDocumentList }, opts),
    /** `GET /api/agents/{agent}/documents/{name}`: a document (its current version, or `version`). */
    document: async (agent: string, name: string, options: { version?: number } = {}, opts?: CallOptions) =>
      call(
        { method: 'GET', path: `/api/agents/${documentPathOf(agent, name)}`, query: { version: options.version }, retry: 'idempotent', schema: AgentDocument },
        opts,
      ),
    /** `PUT /api/agents/{agent}/documents/{name}`: a new version of a document. */
    write: async (agent: string, name: string, input: WriteAgentDocumentInput, opts?: CallOptions) =>
      call({ method: 'PUT', path: `/api/agents/${documentPathOf(agent, name)}`, body: input, retry: 'unsafe', schema: AgentDocumentInfo }, opts),
    /** `GET /api/agents/{agent}/versions/{name}`: every version of a document, newest first. */
    versions: async (agent: string, name: string, opts?: CallOptions) =>
      call(
        {
          method: 'GET',
          path: `/api/agents/${encodeURIComponent(agent)}/versions/${name.split('/').map(encodeURIComponent).join('/')}`,
          retry: 'idempotent',
          schema: AgentDocumentList,
        },
        opts,
      ),
    /** `POST /api/agents/{agent}/compact`: compacts a stored agent's history into its compact.md (the previous memory stays a version). */
    compact: async (agent: string, input: CompactRequest, opts?: CallOptions) =>
      call({ method: 'POST', path: `/api/agents/${encodeURIComponent(agent)}/compact`, body: input, retry: 'unsafe', schema: CompactResult }, opts),
  }
}

/** The admin calls (`/api/status`, `/api/tokens`, `/api/reown`, forget, purge, backup): they need the `admin` permission. */
function adminCalls(call: Call) {
  return {
    ...clientCalls(call, ADMIN_OPERATIONS),
    tokens: clientCalls(call, TOKEN_OPERATIONS),
    /** `POST /api/admin/backup`: a backup file of the server's embedded database (`knowhub restore` reads it). Give it a long `timeoutMs`. */
    backup: async (opts?: CallOptions) =>
      call(
        { method: 'POST', path: '/api/admin/backup', retry: 'idempotent', responseBytes: 'application/vnd.knowhub.backup', schema: z.instanceof(Uint8Array) },
        opts,
      ),
  }
}

/**
 * Creates a client. No I/O happens until the first call.
 * @example
 * import { createClient } from 'knowhub/client'
 * const kh = createClient({ baseUrl: 'http://127.0.0.1:8420', token: process.env.KNOWHUB_TOKEN })
 * const entry = await kh.knowledge.save({ task: 'Log in to site A', content: 'Use undetected_chromedriver', types: ['tool'] })
 * const { results } = await kh.knowledge.search({ q: 'selenium login blocked' })
 * await kh.knowledge.update(entry.id, { add_helpful_case: { task: 'scrape site A', outcome: 'worked' } })
 */
export function createClient(options: ClientOptions = {}) {
  return createClientOver(fetchRequester(options.fetch ?? ((url: string, init: RequestInit) => globalThis.fetch(url, init))), options)
}

/**
 * A client whose requests go through `request` instead of `fetch`: the same calls, retries,
 * validation and errors. The CLI passes its `node:http` requester (src/cli/http-requester.ts):
 * Node's `fetch` loads undici on first use, ~80 ms of a one-shot command. Not part of
 * `knowhub/client` (a library user passes `fetch` to {@link createClient}).
 * @example
 * const kh = createClientOver(fetchRequester(fetch), { baseUrl: 'http://127.0.0.1:8420' })
 */
export function createClientOver(request: Requester, options: Omit<ClientOptions, 'fetch'> = {}) {
  const transport = transportOf(options, request)
  const call: Call = (spec, opts) => send(transport, spec, callOptions(opts))
  return {
    /** The base URL calls go to. */
    baseUrl: transport.baseUrl,
    knowledge: knowledgeCalls(call),
    /** The knowledge folder (seed 002's layout): export, import, sync. */
    folder: folderCalls(call),
    resources: resourceCalls(call),
    agent: agentCalls(call),
    /** Status and API tokens, for callers with the `admin` permission. */
    admin: adminCalls(call),
    /** `GET /api/users/{id}/profile`: a user's profile, current view (the user itself, its org admin, the hub operator). */
    users: clientCalls(call, USER_OPERATIONS),
    /** `GET /healthz`: liveness and the server's version (no token needed). */
    healthz: async (opts?: CallOptions) => call({ method: 'GET', path: '/healthz', retry: 'idempotent', schema: Health }, opts),
    /** `GET /api/openapi.json`: the API's OpenAPI 3.1 document (no token needed). */
    openapi: async (opts?: CallOptions) => call({ method: 'GET', path: '/api/openapi.json', retry: 'idempotent', schema: OpenApiDocument }, opts),
  }
}

/** A client made by {@link createClient}. */
export type KnowHubClient = ReturnType<typeof createClient>
