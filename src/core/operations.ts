/**
 * The operations of KnowHub's API, one declaration each (src/core/operation.ts says what a
 * declaration holds). The routes, the OpenAPI paths, the typed client's methods, the port's type
 * and both of its adapters are derived from this table: a new operation is one entry here and a
 * service method (CONTRIBUTING.md, "Adding an operation").
 */
import { Deleted, HubStatus } from './api.js'
import { ForgetReceipt, PurgeInput, PurgeReceipt } from './erasure.js'
import { ExtractInput, ExtractResult } from './extract.js'
import {
  BatchFeedbackInput,
  BatchFeedbackResult,
  EditKnowledgeInput,
  FeedbackInput,
  FeedbackResponse,
  KnowledgeEntry,
  KnowledgeEntryView,
  KnowledgeListPage,
  KnowledgeVersions,
  ListInput,
  ReownInput,
  ReownResult,
  SaveKnowledgeInput,
  SavedKnowledge,
  SearchInput,
  SearchResponse,
  type KnowledgeVersion,
} from './knowledge.js'
import { operation, type Retryability } from './operation.js'
import { GoalRequest, GoalTree } from './goals.js'
import { Me, UserProfile } from './profile.js'
import { ListResourcesInput, Resource, ResourceListPage, SaveResourceInput, UpdateResourceInput, resourceIdFromPath, resourceIdProblem } from './resources.js'
import { SlimInput, SlimResult, UnmergeResult } from './slim.js'
import { CreatedToken, CreateTokenInput, TokenInfo, TokenList } from './tokens.js'

/** A knowledge id in a path: 1-128 characters, not `.` or `..` (URL parsing would resolve those before the request leaves). */
const knowledgeId = {
  check: (id: string) =>
    id === '' || id === '.' || id === '..' || id.length > 128
      ? { message: 'Invalid knowledge id', issue: 'knowledge ids are 1-128 characters and not . or ..' }
      : undefined,
}

/** Feedback that only sets the score can be repeated safely; added cases, evolutions and supersessions cannot. */
function feedbackRetry([, body]: readonly unknown[]): Retryability {
  const record = (body ?? {}) as Record<string, unknown>
  const additive = ['add_helpful_case', 'add_harmful_case', 'evolve_feedback', 'supersede_with'].some((key) => record[key] !== undefined)
  return additive ? 'unsafe' : 'idempotent'
}

/** An action on one entry that answers it (archive, restore). */
const entryAction = (path: '/api/knowledge/:id/archive' | '/api/knowledge/:id/restore', call: string, summary: string) =>
  operation({
    method: 'POST',
    path,
    params: { id: knowledgeId },
    output: KnowledgeEntry,
    call,
    retry: 'unsafe',
    action: 'knowledge.manage',
    summary,
  })

/**
 * The knowledge operations (seed 003's API and KnowHub's): `/api/knowledge` and below.
 * @example
 * KNOWLEDGE_OPERATIONS.versions.path // '/api/knowledge/:id/versions'
 */
export const KNOWLEDGE_OPERATIONS = {
  /** Hybrid retrieval and the quality rerank (seed 003); `X-KnowHub-Routing` tells semantic routing's outcome. */
  search: operation({
    method: 'GET',
    path: '/api/knowledge/search',
    input: {
      from: 'query',
      schema: SearchInput,
      booleans: ['explain', 'rerank'],
      lists: ['tags', 'visibility'],
      describe: {
        q: 'Query text',
        top_k: 'How many results (default 5)',
        min_score: 'Drop entries scored below this (default 3)',
        types: 'Only these types, comma-separated',
        as_of: 'What was valid at this date (ISO 8601) instead of now',
        include: 'Also superseded and/or expired entries, comma-separated (superseded,expired), each marked in its result',
        tags: 'Only entries with these tags: key:value pairs, comma-separated (every pair must hold)',
        visibility: 'Only entries of these visibilities, comma-separated: private, shared, org, public',
        order: 'relevance (default), scope (seed 002) or quality (seed 003)',
      },
    },
    expand: 'results',
    output: SearchResponse,
    // Semantic routing's outcome: `llm`, `fallback; reason=llm_timeout`, … (absent when routing is off).
    headers: (response) =>
      response.routing
        ? { 'X-KnowHub-Routing': response.routing.status === 'fallback' ? `fallback; reason=${response.routing.reason ?? 'unknown'}` : response.routing.status }
        : undefined,
    call: 'knowledge.search',
    retry: 'idempotent',
    action: 'knowledge.read',
    summary: 'Search knowledge (hybrid retrieval, quality rerank)',
  }),
  /** Never retried after a network error or timeout: it could be saved twice. */
  save: operation({
    method: 'POST',
    path: '/api/knowledge',
    input: { from: 'body', schema: SaveKnowledgeInput },
    output: SavedKnowledge,
    // A client-given id saved already with the same text: nothing changed.
    status: (saved) => (saved.existed ? 200 : 201),
    ok: 'Created',
    call: 'knowledge.save',
    retry: 'unsafe',
    action: 'knowledge.write',
    summary: 'Save a knowledge entry',
  }),
  /** One page, newest first; active entries unless `status` says otherwise. */
  list: operation({
    method: 'GET',
    path: '/api/knowledge',
    input: { from: 'query', schema: ListInput, optional: true, lists: ['types', 'scopes', 'status', 'tags', 'visibility'] },
    expand: 'items',
    output: KnowledgeListPage,
    call: 'knowledge.list',
    retry: 'idempotent',
    action: 'knowledge.read',
    summary: 'List knowledge, newest first',
  }),
  get: operation({
    method: 'GET',
    path: '/api/knowledge/:id',
    params: { id: knowledgeId },
    expand: 'entry',
    output: KnowledgeEntryView,
    call: 'knowledge.get',
    retry: 'idempotent',
    action: 'knowledge.read',
    summary: 'One entry',
  }),
  versions: operation({
    method: 'GET',
    path: '/api/knowledge/:id/versions',
    params: { id: knowledgeId },
    output: KnowledgeVersions,
    wire: { out: (versions: KnowledgeVersion[], [id]) => ({ id: id!, versions }), back: (body) => body.versions },
    call: 'knowledge.versions',
    retry: 'idempotent',
    action: 'knowledge.read',
    summary: 'Previous versions, oldest first',
  }),
  /**
   * Seed 003's `knowledge_update`: `add_helpful_case`, `add_harmful_case`, `update_score`, `evolve_feedback`
   * (501 `llm_not_configured` without an LLM); or `supersede_with`. Retried only when it just sets the score.
   */
  feedback: operation({
    method: 'PUT',
    path: '/api/knowledge/:id',
    params: { id: knowledgeId },
    input: { from: 'body', schema: FeedbackInput },
    output: FeedbackResponse,
    call: 'knowledge.feedback',
    client: 'update',
    retry: feedbackRetry,
    action: 'knowledge.write',
    summary:
      'Feedback: add_helpful_case, add_harmful_case, update_score, evolve_feedback (501 llm_not_configured without an LLM); or supersede_with (an entry id or a new entry body) with valid_to: supersedes the entry (owner or admin)',
    responses: { 501: 'No LLM configured (evolve_feedback)' },
  }),
  /** Helpful/harmful feedback on many entries; one result per item. */
  batchFeedback: operation({
    method: 'POST',
    path: '/api/knowledge/batch_update',
    input: { from: 'body', schema: BatchFeedbackInput },
    output: BatchFeedbackResult,
    call: 'knowledge.batchFeedback',
    client: 'batchUpdate',
    retry: 'unsafe',
    action: 'knowledge.write',
    summary: 'Helpful/harmful feedback on many entries',
  }),
  /** Edits by the owner (or an admin); the previous version is kept. */
  edit: operation({
    method: 'PATCH',
    path: '/api/knowledge/:id',
    params: { id: knowledgeId },
    input: { from: 'body', schema: EditKnowledgeInput },
    output: KnowledgeEntry,
    call: 'knowledge.edit',
    retry: 'unsafe',
    action: 'knowledge.manage',
    summary: 'Edit (owner or admin); the previous version is kept',
    responses: { 409: 'Changed concurrently' },
  }),
  archive: entryAction('/api/knowledge/:id/archive', 'knowledge.archive', 'Archive (owner or admin)'),
  restore: entryAction('/api/knowledge/:id/restore', 'knowledge.restore', 'Make active again (owner or admin)'),
  delete: operation({
    method: 'DELETE',
    path: '/api/knowledge/:id',
    params: { id: knowledgeId },
    output: Deleted,
    wire: { out: (_: void, [id]) => ({ id: id!, deleted: true as const }), back: () => undefined },
    call: 'knowledge.delete',
    retry: 'idempotent',
    action: 'knowledge.manage',
    summary: 'Delete (owner or admin)',
  }),
  /** Merges near-duplicates (`dry_run: true` only reports the plan). */
  slim: operation({
    method: 'POST',
    path: '/api/knowledge/slim',
    input: { from: 'body', schema: SlimInput, optional: true },
    output: SlimResult,
    ok: 'The groups merged (or, with dry_run, the plan)',
    call: 'slim.slim',
    retry: 'unsafe',
    action: 'slim',
    summary: 'Merge near-duplicate entries',
  }),
  /** Undoes a slim merge. */
  unmerge: operation({
    method: 'POST',
    path: '/api/knowledge/:id/unmerge',
    params: { id: knowledgeId },
    output: UnmergeResult,
    call: 'slim.unmerge',
    retry: 'unsafe',
    action: 'slim',
    summary: 'Undo a slim merge: originals active again, the merged entry archived',
  }),
  /** Knowledge from a conversation (`mode: 'propose'` reports, `'save'` writes); needs the LLM (501 `llm_not_configured` without one). */
  extract: operation({
    method: 'POST',
    path: '/api/knowledge/extract',
    input: { from: 'body', schema: ExtractInput },
    output: ExtractResult,
    call: 'extraction.extract',
    served: 'always',
    retry: 'unsafe',
    action: 'knowledge.write',
    summary: 'Knowledge from a conversation (needs the LLM: 501 llm_not_configured without one); mode propose reports, save writes',
    responses: { 501: 'No LLM configured' },
  }),
} as const

/**
 * The users' operations: a user's profile (the user itself, its org admin, the hub operator).
 * @example
 * USER_OPERATIONS.profile.path // '/api/users/:id/profile'
 */
export const USER_OPERATIONS = {
  /** The caller itself: its principal and role (any caller with `read`). */
  me: operation({
    method: 'GET',
    path: '/api/me',
    output: Me,
    call: 'users.me',
    retry: 'idempotent',
    action: 'profile.read',
    summary: 'The caller: its principal and its role in the role table (to check a token)',
  }),
  /** A user's profile, current view: each seed-002 category's current entries and a timeline. */
  profile: operation({
    method: 'GET',
    path: '/api/users/:id/profile',
    output: UserProfile,
    call: 'users.profile',
    retry: 'idempotent',
    action: 'profile.read',
    summary:
      "A user's profile, current view: each seed-002 category with its current entries and their confidence, and a timeline of changes (the user itself, its org admin, the hub operator; others: not_found)",
  }),
} as const

/**
 * API tokens (`/api/tokens`): the hub operator's, and an org admin's within its org.
 * @example
 * TOKEN_OPERATIONS.create.status // 201
 */
export const TOKEN_OPERATIONS = {
  /** A new API token (the only time the token itself is shown); `hub:admin` only for a caller on the server's machine. */
  create: operation({
    method: 'POST',
    path: '/api/tokens',
    input: { from: 'body', schema: CreateTokenInput },
    output: CreatedToken,
    status: 201,
    ok: 'Created',
    call: 'admin.tokens.create',
    retry: 'unsafe',
    action: 'tokens.manage',
    summary:
      'Create an API token (hub operator: any but hub:admin, which only the CLI on the server machine mints; org admin: of its org, for its members, with its permissions at most); the token is in this answer only',
  }),
  /** Every token the caller may see, never the tokens themselves. */
  list: operation({
    method: 'GET',
    path: '/api/tokens',
    output: TokenList,
    wire: { out: (items: TokenInfo[]) => ({ items }), back: (body) => body.items },
    unwrap: true,
    call: 'admin.tokens.list',
    retry: 'idempotent',
    action: 'tokens.manage',
    summary: "API tokens, never the tokens themselves (hub operator: all; org admin: its org's)",
  }),
  revoke: operation({
    method: 'POST',
    path: '/api/tokens/:id/revoke',
    output: TokenInfo,
    call: 'admin.tokens.revoke',
    retry: 'idempotent',
    action: 'tokens.manage',
    summary: "Revoke an API token (hub operator: any; org admin: its org's, others are not_found)",
  }),
} as const

/**
 * Administration: status, reown, forget and purge (the admin and erasure services check each
 * against the role table). The backup's bytes are not a table operation (src/server/routes/admin.ts).
 * @example
 * ADMIN_OPERATIONS.forget.method // 'DELETE'
 */
export const ADMIN_OPERATIONS = {
  /** Database, embedder, entries, and who is asking. */
  status: operation({
    method: 'GET',
    path: '/api/status',
    output: HubStatus,
    call: 'admin.status',
    retry: 'idempotent',
    action: 'status',
    summary: "Database, embedder, entries and the caller (hub operator: the hub; org admin: its org's counts, no location)",
  }),
  /** Every entry of one owner to another owner and/or shared with more scopes (safe to repeat: a second run changes nothing). */
  reown: operation({
    method: 'POST',
    path: '/api/reown',
    input: { from: 'body', schema: ReownInput },
    output: ReownResult,
    call: 'admin.reown',
    retry: 'idempotent',
    action: 'reown',
    summary:
      'Give every entry of one owner a new owner and/or more scopes (hub operator; an org admin within what it sees), e.g. entries saved in local mode (user:local) after the switch to token mode; each changed entry keeps its previous version with the reason; dry_run only reports',
  }),
  /**
   * Forgets a user (`user:ID`) everywhere and answers a receipt of counts (`dryRun`: counts only).
   * Not retried unless a dry run; the tables are rewritten afterwards, so the port waits ten minutes.
   */
  forget: operation({
    method: 'DELETE',
    path: '/api/principals/:principal',
    params: { principal: { openapi: { schema: { type: 'string', example: 'user:bob' } } } },
    options: {
      dryRun: { query: 'dry_run', type: 'boolean', default: false, openapi: { schema: { type: 'boolean' } } },
      force: { query: 'force', type: 'boolean', default: false, openapi: { schema: { type: 'boolean' } } },
    },
    output: ForgetReceipt,
    call: 'erasure.forget',
    retry: ([, options]) => ((options as { dryRun?: boolean } | undefined)?.dryRun ? 'idempotent' : 'unsafe'),
    timeoutMs: 600_000,
    action: 'principals.forget',
    summary:
      'Forget a user (user:ID) everywhere: entries, versions, feedback, resources and secrets, tokens, goals, agent documents, audit rows; then the tables are rewritten so the bytes leave the files. Hub operator; an org admin: users of its org (others are not_found). A user of whom nothing is stored is not_found unless force=true. dry_run=true counts only. The receipt holds counts, never content',
  }),
  /** Merged (slimmed originals) and archived entries older than the given ages, for good; `dry_run` counts only. */
  purge: operation({
    method: 'POST',
    path: '/api/admin/purge',
    input: { from: 'body', schema: PurgeInput },
    output: PurgeReceipt,
    call: 'erasure.purge',
    retry: ([input]) => ((input as { dry_run?: boolean } | undefined)?.dry_run ? 'idempotent' : 'unsafe'),
    timeoutMs: 600_000,
    action: 'retention.purge',
    summary:
      'Delete merged (slimmed originals) and archived entries older than the given ages for good (hub operator; an org admin: entries its ids reach); dry_run counts only',
  }),
} as const

/** A resource id in a path: path-like (`code/selenium/login`), the rest of the path, checked on both sides. */
const resourceId = {
  check: (id: string) => {
    const problem = resourceIdProblem(id)
    return problem ? { message: `Invalid resource id: ${problem}`, issue: problem } : undefined
  },
  decode: resourceIdFromPath,
  openapi: { description: 'A path-like id such as code/selenium/login: the rest of the URL path, slashes included' },
}

/** `?owner=kind:id`: ids are namespaced by owner; default the caller's own, else the one it sees first. */
const owner = {
  query: 'owner',
  type: 'string',
  openapi: {
    description: "Ids are namespaced by owner: this owner's resource (kind:id). Default: the caller's own, else the visible one in the highest-priority scope",
    schema: { type: 'string' },
  },
} as const

/**
 * The resource operations (seed 003): `/api/resource` and below. The deletion is written by hand
 * (src/server/routes/resources.ts): the client's answer leaves the owner out, which the port returns.
 * @example
 * RESOURCE_OPERATIONS.get.path // '/api/resource/:id+'
 */
export const RESOURCE_OPERATIONS = {
  /** Creates (201), or updates the owner's resource with this id (200); never returns `secure_body`. */
  save: operation({
    method: 'POST',
    path: '/api/resource',
    input: { from: 'body', schema: SaveResourceInput },
    output: Resource,
    wire: { out: (saved: { resource: Resource; created: boolean }) => saved.resource, back: (resource) => ({ resource, created: resource.version === 1 }) },
    status: (saved) => (saved.created ? 201 : 200),
    call: 'resources.upsert',
    retry: 'unsafe',
    action: 'resource.write',
    summary: "Save a resource in its owner's namespace: created (201), or the owner's existing one updated (200)",
    responses: { 200: 'Updated', 201: 'Created', 409: "Changed concurrently, or (admins only) the id is taken in another owner's namespace" },
  }),
  /** One page of summaries (never bodies or secrets); lists may be arrays or comma-separated. */
  list: operation({
    method: 'GET',
    path: '/api/resource',
    input: { from: 'query', schema: ListResourcesInput, optional: true, booleans: ['expired'] },
    output: ResourceListPage,
    call: 'resources.list',
    retry: 'idempotent',
    action: 'resource.read',
    summary: 'List resources (never secrets)',
  }),
  /** `secure_body` only when asked for (the default) and allowed: `secrets:read` in the resource's scope. */
  get: operation({
    method: 'GET',
    path: '/api/resource/:id+',
    params: { id: resourceId },
    options: { owner, includeSecret: { query: 'include_secret', type: 'boolean', default: true, openapi: { schema: { type: 'boolean', default: true } } } },
    optionsAfterPrincipal: true,
    output: Resource,
    call: 'resources.get',
    retry: 'idempotent',
    action: 'resource.read',
    summary: 'One resource; secure_body only with secrets:read in its scope',
  }),
  /** The fields to change (`secure_body: null` removes the secret). */
  update: operation({
    method: 'PUT',
    path: '/api/resource/:id+',
    params: { id: resourceId },
    input: { from: 'body', schema: UpdateResourceInput },
    options: { owner },
    optionsAfterPrincipal: true,
    output: Resource,
    call: 'resources.update',
    retry: 'idempotent',
    action: 'resource.write',
    summary: 'Update (owner or admin)',
  }),
} as const

/**
 * The agent operations the table declares: seed 003's goal tool. An agent's context and compaction
 * are written by hand (src/core/backend.ts's `AgentBackend`): the agent is stored in the hub or is a
 * folder on the caller's machine, chosen per call.
 * @example
 * AGENT_OPERATIONS.goal.path // '/api/goals'
 */
export const AGENT_OPERATIONS = {
  /** create, focus (attaches related knowledge), complete, abandon, show; `show` is safe to repeat, the other actions are not. */
  goal: operation({
    method: 'POST',
    path: '/api/goals',
    input: { from: 'body', schema: GoalRequest },
    output: GoalTree,
    call: 'agent.goal',
    retry: ([input]) => ((input as { action?: string } | undefined)?.action === 'show' ? 'idempotent' : 'unsafe'),
    action: 'knowledge.write',
    summary: 'The goal tool (seed 003): create | focus (attaches related knowledge) | complete | abandon | show',
  }),
} as const
