/**
 * The OpenAPI 3.1 document of the HTTP API, generated with zod's `z.toJSONSchema`
 * from the same schemas the services validate requests with (request bodies and
 * query parameters as inputs, responses as outputs).
 */
import { z } from 'zod'
import {
  AgentContextRequest,
  AgentDocument,
  AgentDocumentInfo,
  AgentDocumentList,
  AgentKnowledge,
  AgentKnowledgeRequest,
  AgentList,
  AssembledContext,
  CompactRequest,
  CompactResult,
  LocalCompactRequest,
  WriteAgentDocumentInput,
} from '../core/agent.js'
import { Deleted, ErrorBody, Health, HubStatus, type OpenApiDocument } from '../core/api.js'
import { ForgetReceipt, PurgeInput, PurgeReceipt } from '../core/erasure.js'
import { GoalRequest, GoalTree } from '../core/goals.js'
import { UserProfile } from '../core/profile.js'
import { ExtractInput, ExtractResult } from '../core/extract.js'
import {
  BatchFeedbackInput,
  BatchFeedbackResult,
  EditKnowledgeInput,
  FeedbackInput,
  FeedbackResponse,
  ImportQuery,
  ImportReport,
  KnowledgeEntry,
  KnowledgeEntryView,
  KnowledgeListPage,
  KnowledgeVersions,
  ReownInput,
  ReownResult,
  SaveKnowledgeInput,
  SavedKnowledge,
  SearchResponse,
  SearchResultView,
} from '../core/knowledge.js'
import { FolderFiles, FolderImportBody, FolderImportQuery, FolderImportReport, FolderSyncInput, FolderSyncResult } from '../core/knowledge-folder.js'
import { Resource, ResourceDeleted, ResourceListPage, SaveResourceInput, SecretReadPage, UpdateResourceInput } from '../core/resources.js'
import { SlimInput, SlimResult, UnmergeResult } from '../core/slim.js'
import { CreatedToken, CreateTokenInput, TokenInfo, TokenList } from '../core/tokens.js'
import { pathParams, type OperationGroup, type OperationOption } from '../core/operation.js'
import { ADMIN_OPERATIONS, AGENT_OPERATIONS, KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, TOKEN_OPERATIONS, USER_OPERATIONS } from '../core/operations.js'

type JsonSchema = Record<string, unknown>

/** The groups of the operations table whose paths are derived. */
const OPERATION_GROUPS: readonly OperationGroup[] = [
  KNOWLEDGE_OPERATIONS,
  RESOURCE_OPERATIONS,
  ADMIN_OPERATIONS,
  TOKEN_OPERATIONS,
  USER_OPERATIONS,
  AGENT_OPERATIONS,
]

function schema(s: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as JsonSchema
  // A schema named with .meta({ id }) comes back as a reference to itself in $defs: the component is that definition.
  const self = typeof rest.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(rest.$ref)?.[1] : undefined
  const defs = rest.$defs as Record<string, JsonSchema> | undefined
  if (self === undefined || !defs?.[self]) return rest
  const { [self]: definition, ...others } = defs
  return { ...definition, ...(Object.keys(others).length > 0 ? { $defs: others } : {}) }
}

/** Turns a query schema's properties into OpenAPI query parameters (lists are comma-separated or repeated). */
function queryParameters(s: z.ZodType, descriptions: Record<string, string> = {}): JsonSchema[] {
  const json = schema(s, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] }
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const isList = property.type === 'array' || JSON.stringify(property).includes('"type":"array"')
    return {
      name,
      in: 'query',
      required: json.required?.includes(name) ?? false,
      schema: property,
      ...(isList ? { style: 'form', explode: false } : {}),
      ...(descriptions[name] ? { description: descriptions[name] } : {}),
    }
  })
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const json = (name: string, description = 'OK') => ({ description, content: { 'application/json': { schema: ref(name) } } })
const body = (name: string, required = true) => ({ required, content: { 'application/json': { schema: ref(name) } } })

const ERRORS = {
  400: json('Error', 'Invalid input: details.issues lists every problem with its path'),
  401: json('Error', 'No valid API token'),
  403: json('Error', 'Not allowed'),
  404: json('Error', 'No such entity, or not visible to the caller'),
  413: json('Error', 'Body too large'),
  429: json('Error', 'Rate limited (see Retry-After)'),
}

const agentName = { name: 'agent', in: 'path', required: true, description: 'A stored agent of the caller’s org', schema: { type: 'string' } }
const documentName = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'A document path such as knowledge.md or skills/style.md: the rest of the URL path, slashes included',
  schema: { type: 'string' },
}
const resourceId = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A path-like id such as code/selenium/login: the rest of the URL path, slashes included',
  schema: { type: 'string' },
}
const resourceOwner = {
  name: 'owner',
  in: 'query',
  required: false,
  description: "Ids are namespaced by owner: this owner's resource (kind:id). Default: the caller's own, else the visible one in the highest-priority scope",
  schema: { type: 'string' },
}
const expand = {
  name: 'expand',
  in: 'query',
  required: false,
  description: 'resources: add `resources`, the referenced resources the caller can see (never their secrets)',
  schema: { type: 'string', enum: ['resources'] },
}

/** The schemas the paths refer to, by name: each generated from its core schema (request bodies and queries as inputs, responses as outputs). */
const COMPONENTS: ReadonlyArray<readonly [string, z.ZodType, 'input' | 'output']> = [
  ['Error', ErrorBody, 'output'],
  ['Health', Health, 'output'],
  ['SaveKnowledgeInput', SaveKnowledgeInput, 'input'],
  ['EditKnowledgeInput', EditKnowledgeInput, 'input'],
  ['FeedbackInput', FeedbackInput, 'input'],
  ['BatchFeedbackInput', BatchFeedbackInput, 'input'],
  ['SlimInput', SlimInput, 'input'],
  ['SlimResult', SlimResult, 'output'],
  ['UnmergeResult', UnmergeResult, 'output'],
  ['ExtractInput', ExtractInput, 'input'],
  ['ExtractResult', ExtractResult, 'output'],
  ['KnowledgeEntry', KnowledgeEntry, 'output'],
  ['SavedKnowledge', SavedKnowledge, 'output'],
  ['FeedbackResponse', FeedbackResponse, 'output'],
  ['KnowledgeEntryView', KnowledgeEntryView, 'output'],
  ['KnowledgeVersions', KnowledgeVersions, 'output'],
  ['KnowledgePage', KnowledgeListPage, 'output'],
  ['SearchResponse', SearchResponse, 'output'],
  ['SearchResult', SearchResultView, 'output'],
  ['BatchResult', BatchFeedbackResult, 'output'],
  ['Deleted', Deleted, 'output'],
  ['ResourceDeleted', ResourceDeleted, 'output'],
  ['SaveResourceInput', SaveResourceInput, 'input'],
  ['UpdateResourceInput', UpdateResourceInput, 'input'],
  ['Resource', Resource, 'output'],
  ['ResourcePage', ResourceListPage, 'output'],
  ['SecretReadPage', SecretReadPage, 'output'],
  ['AgentContextRequest', AgentContextRequest, 'input'],
  ['AssembledContext', AssembledContext, 'output'],
  ['AgentKnowledgeRequest', AgentKnowledgeRequest, 'input'],
  ['AgentKnowledge', AgentKnowledge, 'output'],
  ['LocalCompactRequest', LocalCompactRequest, 'input'],
  ['CompactRequest', CompactRequest, 'input'],
  ['CompactResult', CompactResult, 'output'],
  ['AgentList', AgentList, 'output'],
  ['AgentDocumentList', AgentDocumentList, 'output'],
  ['AgentDocument', AgentDocument, 'output'],
  ['AgentDocumentInfo', AgentDocumentInfo, 'output'],
  ['WriteAgentDocumentInput', WriteAgentDocumentInput, 'input'],
  ['GoalRequest', GoalRequest, 'input'],
  ['GoalTree', GoalTree, 'output'],
  ['ImportReport', ImportReport, 'output'],
  ['HubStatus', HubStatus, 'output'],
  ['CreateTokenInput', CreateTokenInput, 'input'],
  ['CreatedToken', CreatedToken, 'output'],
  ['TokenInfo', TokenInfo, 'output'],
  ['TokenList', TokenList, 'output'],
  ['ForgetReceipt', ForgetReceipt, 'output'],
  ['PurgeInput', PurgeInput, 'input'],
  ['PurgeReceipt', PurgeReceipt, 'output'],
  ['UserProfile', UserProfile, 'output'],
  ['ReownInput', ReownInput, 'input'],
  ['ReownResult', ReownResult, 'output'],
  ['FolderFiles', FolderFiles, 'output'],
  ['FolderImportBody', FolderImportBody, 'input'],
  ['FolderImportReport', FolderImportReport, 'output'],
  ['FolderSyncInput', FolderSyncInput, 'input'],
  ['FolderSyncResult', FolderSyncResult, 'output'],
]

const NAMES = new Map(COMPONENTS.map(([name, s]) => [s, name]))

/**
 * The component name of a schema an operation uses: its name in {@link COMPONENTS}, else its zod
 * `.meta({ id })` (a new operation's schemas need no entry here).
 */
function nameOf(s: z.ZodType): string {
  const name = NAMES.get(s) ?? (s.meta()?.id as string | undefined)
  if (!name) throw new Error('An operation uses a schema with no name: give it .meta({ id }) or add it to COMPONENTS (src/server/openapi.ts)')
  return name
}

/** The components' JSON Schemas: the listed ones, and the operations' schemas named by `.meta({ id })`. */
function components(): Record<string, JsonSchema> {
  const listed = COMPONENTS.map(([name, s, io]) => [name, schema(s, io)] as const)
  const ops = OPERATION_GROUPS.flatMap((group) => Object.values(group)).flatMap((op) => [
    ...(op.input?.from === 'body' ? [[op.input.schema as z.ZodType, 'input'] as const] : []),
    [op.output as z.ZodType, 'output'] as const,
  ])
  const named = ops.filter(([s]) => !NAMES.has(s)).map(([s, io]) => [nameOf(s), schema(s, io)] as const)
  return Object.fromEntries([...listed, ...named])
}

/** Paths from several places, their methods merged per path. */
function merged(parts: ReadonlyArray<Record<string, Record<string, unknown>>>): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const part of parts) for (const [path, methods] of Object.entries(part)) paths[path] = { ...paths[path], ...methods }
  return paths
}

/** The OpenAPI path of each operation of the table (src/core/operations.ts), merged by path. */
function operationPaths(groups: readonly OperationGroup[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const op of groups.flatMap((group) => Object.values(group))) {
    const path = op.path.replace(/:(\w+)\+?/g, '{$1}')
    const parameters = [
      ...pathParams(op.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' }, ...op.params?.[name]?.openapi })),
      ...(op.input?.from === 'query' ? queryParameters(op.input.schema, op.input.describe) : []),
      ...Object.values((op.options ?? {}) as Record<string, OperationOption>).map((o) => ({ name: o.query, in: 'query', required: false, ...o.openapi })),
      ...(op.expand ? [expand] : []),
    ]
    const status = typeof op.status === 'number' ? op.status : 200
    const operation = {
      summary: op.summary,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(op.input?.from === 'body' ? { requestBody: body(nameOf(op.input.schema), !op.input.optional) } : {}),
      responses: {
        ...(typeof op.status === 'function' ? {} : { [status]: json(nameOf(op.output), op.ok ?? 'OK') }),
        ...ERRORS,
        ...Object.fromEntries(
          Object.entries(op.responses ?? {}).map(([code, text]) => [
            code,
            json(code === String(status) || Number(code) < 300 ? nameOf(op.output) : 'Error', text as string),
          ]),
        ),
      },
    }
    paths[path] = { ...paths[path], [op.method.toLowerCase()]: operation }
  }
  return paths
}

/** `/api/knowledge/folder`: seed 002's knowledge folder (docs/knowledge-folder.md). */
function knowledgeFolderPaths(): Record<string, Record<string, unknown>> {
  return {
    '/api/knowledge/folder': {
      get: {
        summary: "The caller's knowledge folder (global/, users/<id>/…): a zip, or with format=json its files",
        parameters: [{ name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['zip', 'json'], default: 'zip' } }],
        responses: {
          200: {
            description: 'The folder',
            content: { 'application/zip': { schema: { type: 'string', format: 'binary' } }, 'application/json': { schema: ref('FolderFiles') } },
          },
          ...ERRORS,
        },
      },
    },
    '/api/knowledge/folder/import': {
      post: {
        summary: 'Import a knowledge folder (its files as JSON, or a zip): adds, a new version per changed entry, removed entries archived with prune',
        parameters: queryParameters(FolderImportQuery),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('FolderImportBody') }, 'application/zip': { schema: { type: 'string', format: 'binary' } } },
        },
        responses: { 200: json('FolderImportReport', 'The report (or, with dry_run or errors, the plan)'), ...ERRORS },
      },
    },
    '/api/knowledge/folder/sync': {
      post: {
        summary: 'One sync step with a knowledge folder: changes both ways, conflicts keep both sides; answers the folder to write and the new state',
        requestBody: body('FolderSyncInput'),
        responses: { 200: json('FolderSyncResult'), ...ERRORS },
      },
    },
  }
}

/** `/api/knowledge`'s JSONL export and import (the table's operations are derived). */
function knowledgePaths(): Record<string, Record<string, unknown>> {
  return {
    '/api/knowledge/export': {
      get: {
        summary: 'Every visible entry with its history, as JSONL (one entry a line; what `knowhub export` writes)',
        responses: { 200: { description: 'JSONL', content: { 'application/x-ndjson': { schema: { type: 'string' } } } }, ...ERRORS },
      },
    },
    '/api/knowledge/import': {
      post: {
        summary:
          'Import JSONL: lines as the export writes them (with an id) or POST /api/knowledge bodies (without one: new entries), detected per line; all or nothing unless mode=partial; bad lines reported by number',
        parameters: queryParameters(ImportQuery),
        requestBody: { required: true, content: { 'application/x-ndjson': { schema: { type: 'string' } } } },
        responses: { 200: json('ImportReport'), ...ERRORS },
      },
    },
  }
}

/** `/api/admin/backup`: the backup's bytes (the table's admin operations are derived). */
function adminPaths(): Record<string, Record<string, unknown>> {
  return {
    '/api/admin/backup': {
      post: {
        summary: 'A backup file of the embedded database, consistent while the server writes (hub operator; PostgreSQL: 400, use pg_dump)',
        responses: {
          200: {
            description: 'The backup file (knowhub restore reads it)',
            content: { 'application/vnd.knowhub.backup': { schema: { type: 'string', format: 'binary' } } },
          },
          ...ERRORS,
        },
      },
    },
  }
}

/** `/api/resource` and below. */
function resourcePaths(): Record<string, Record<string, unknown>> {
  return {
    '/api/resource/{id}': {
      delete: { summary: 'Delete (owner or admin)', parameters: [resourceId, resourceOwner], responses: { 200: json('ResourceDeleted'), ...ERRORS } },
    },
    '/api/secret-reads': {
      get: {
        summary:
          "The audit of secret reads (API, MCP, tools, dashboard, backups), newest first: the caller's own resources', and an org admin's its org's. Never the secret",
        parameters: [
          { name: 'resource', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'owner', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', default: 50, minimum: 1, maximum: 500 } },
          { name: 'before', in: 'query', required: false, schema: { type: 'integer' }, description: 'next_before of the previous page' },
        ],
        responses: { 200: json('SecretReadPage'), ...ERRORS },
      },
    },
    '/api/agent/context': {
      post: {
        summary:
          "The starting context (seed 004) of an agent stored in the caller's org (read; not_found for an agent it cannot see): system prompt, compact memory, knowledge wrapped as data, within a token budget, and the report",
        requestBody: body('AgentContextRequest'),
        responses: { 200: json('AssembledContext'), ...ERRORS },
      },
    },
    '/api/agent/knowledge': {
      post: {
        summary:
          "KnowHub's part of a context the caller assembles from its own agent folder (read): profile entries, entries related to the task, the pack catalog",
        requestBody: body('AgentKnowledgeRequest', false),
        responses: { 200: json('AgentKnowledge'), ...ERRORS },
      },
    },
    '/api/agent/compact': {
      post: {
        summary:
          "Compacts a history whose memory the caller keeps (write, the server's LLM): previous_memory in, memory out; extraction saves entries; nothing of the memory is stored",
        requestBody: body('LocalCompactRequest'),
        responses: { 200: json('CompactResult'), ...ERRORS },
      },
    },
    '/api/agents': {
      get: { summary: "The stored agents of the caller's org that it may see (read)", responses: { 200: json('AgentList'), ...ERRORS } },
    },
    '/api/agents/{agent}/documents': {
      get: {
        summary: 'The current version of each document of a stored agent the caller may see (read)',
        parameters: [agentName],
        responses: { 200: json('AgentDocumentList'), ...ERRORS },
      },
    },
    '/api/agents/{agent}/documents/{name}': {
      get: {
        summary: 'A document of a stored agent: its current version, or ?version=N (read, a shared scope)',
        parameters: [agentName, documentName, { name: 'version', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } }],
        responses: { 200: json('AgentDocument'), ...ERRORS },
      },
      put: {
        summary: 'A new version of a document (write; an existing document needs a shared scope; knowledge_function_index.json is generated)',
        parameters: [agentName, documentName],
        requestBody: body('WriteAgentDocumentInput'),
        responses: {
          200: json('AgentDocumentInfo'),
          201: json('AgentDocumentInfo', 'Created (version 1)'),
          409: json('Error', 'expected_version differs'),
          ...ERRORS,
        },
      },
    },
    '/api/agents/{agent}/versions/{name}': {
      get: {
        summary: 'Every version of a document, newest first (read)',
        parameters: [agentName, documentName],
        responses: { 200: json('AgentDocumentList'), ...ERRORS },
      },
    },
    '/api/agents/{agent}/compact': {
      post: {
        summary: "Compacts a stored agent's history into its compact.md (write, the server's LLM); the previous memory stays its previous version",
        parameters: [agentName],
        requestBody: body('CompactRequest'),
        responses: { 200: json('CompactResult'), ...ERRORS },
      },
    },
  }
}

/** The areas of the API, in the order `/docs` shows them (OpenAPI tags), with what each holds. */
export const API_AREAS = [
  { name: 'knowledge', description: 'Knowledge entries: save, search, list, edit, feedback, versions, slim, extraction, JSONL and knowledge-folder transfer' },
  { name: 'resources', description: 'Resources (code, credentials, cookies, notes) and their encrypted secrets; the audit of secret reads' },
  { name: 'packs', description: 'Knowledge packs: served to agents as the knowledge_pack_* tools of the MCP endpoint (the CLI: knowhub packs)' },
  { name: 'agents', description: "Agent context, stored agents' documents and compaction, goals, and the MCP endpoint" },
  { name: 'admin', description: 'The hub: status, tokens, reown, forgetting a principal, purge, backups, metrics, health' },
  { name: 'users', description: 'Who the caller is, and a user’s profile (seed 002)' },
] as const
export type ApiArea = (typeof API_AREAS)[number]['name']

/**
 * The areas a path belongs to (its OpenAPI tags).
 * @example
 * areasOf('/api/knowledge/search') // ['knowledge']
 */
export function areasOf(path: string): ApiArea[] {
  const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`)
  if (under('/api/knowledge')) return ['knowledge']
  if (under('/api/resource') || under('/api/secret-reads')) return ['resources']
  if (under('/mcp')) return ['agents', 'packs']
  if (under('/api/agent') || under('/api/agents') || under('/api/goals')) return ['agents']
  if (under('/api/me') || under('/api/users')) return ['users']
  return ['admin']
}

/** Each operation of `paths` with the tags of its path's areas. */
function tagged(paths: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, methods]) => [
      path,
      Object.fromEntries(Object.entries(methods).map(([method, operation]) => [method, { tags: areasOf(path), ...(operation as object) }])),
    ]),
  )
}

/** The MCP endpoint (streamable HTTP, the MCP SDK's transport): one JSON-RPC route, described, not modelled. */
const MCP_PATH = {
  '/mcp': {
    post: {
      summary:
        'MCP over streamable HTTP: the knowledge, resource, goal and knowledge-pack tools (knowledge_pack_*), for any MCP client (docs/mcp.md); JSON-RPC 2.0 messages, not the REST shapes',
      requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
      responses: { 200: { description: 'A JSON-RPC response, or an event stream of them' }, ...ERRORS },
    },
  },
}

/**
 * The OpenAPI document served at `GET /api/openapi.json`.
 * @example
 * const doc = openApiDocument('0.1.0')
 * doc.paths['/api/knowledge/search'].get.parameters // q, top_k, min_score, types, …
 */
export function openApiDocument(version: string): OpenApiDocument & { paths: Record<string, Record<string, unknown>> } {
  return {
    openapi: '3.1.0',
    info: {
      title: 'KnowHub',
      version,
      description: 'Knowledge entries and resources for AI agents (seed 003 API). Errors: { "error": { "code", "message", "details" } }.',
    },
    components: {
      schemas: components(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API token from `knowhub token create` (kh_…). Not needed in local mode.' },
      },
    },
    security: [{ bearer: [] }, {}],
    tags: API_AREAS.map((area) => ({ ...area })),
    paths: tagged({
      '/healthz': { get: { summary: 'Liveness', security: [], responses: { 200: json('Health') } } },
      '/api/openapi.json': { get: { summary: 'This document', security: [], responses: { 200: { description: 'OK' } } } },
      '/metrics': {
        get: {
          summary: 'Prometheus metrics (admin, or the local principal on a loopback connection; docs/scale.md, Metrics)',
          responses: { 200: { description: 'The Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } }, ...ERRORS },
        },
      },
      ...merged([knowledgePaths(), knowledgeFolderPaths(), resourcePaths(), adminPaths(), operationPaths(OPERATION_GROUPS), MCP_PATH]),
    }),
  }
}
