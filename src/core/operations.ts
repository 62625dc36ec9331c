/**
 * The operations of KnowHub's API, one declaration each (src/core/operation.ts says what a
 * declaration holds). The routes, the OpenAPI paths, the typed client's methods, the port's type
 * and both of its adapters are derived from this table: a new operation is one entry here and a
 * service method (CONTRIBUTING.md, "Adding an operation").
 */
import { KnowledgeVersions, type KnowledgeVersion } from './knowledge.js'
import { operation } from './operation.js'

/** A knowledge id in a path: 1-128 characters, not `.` or `..` (URL parsing would resolve those before the request leaves). */
const knowledgeId = {
  check: (id: string) =>
    id === '' || id === '.' || id === '..' || id.length > 128
      ? { message: 'Invalid knowledge id', issue: 'knowledge ids are 1-128 characters and not . or ..' }
      : undefined,
}

/**
 * The knowledge operations (seed 003's API and KnowHub's): `/api/knowledge` and below.
 * @example
 * KNOWLEDGE_OPERATIONS.versions.path // '/api/knowledge/:id/versions'
 */
export const KNOWLEDGE_OPERATIONS = {
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
} as const
