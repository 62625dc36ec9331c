/**
 * The agent tools over HTTP: a `ToolBackend` (src/tools/backend.ts) that calls a
 * remote KnowHub server through the typed client, so the same tools run in-process
 * (`localBackend`) or against a server. Failures reject with a `KnowHubError` as the
 * interface promises: the server's code, message and details, plus the request id.
 */
import { KnowHubError, type ErrorCode } from '../core/errors.js'
import { ListInput, SearchInput } from '../core/knowledge.js'
import { SlimInput } from '../core/slim.js'
import { parseWith } from '../core/validate.js'
import type { ToolBackend } from '../tools/backend.js'
import type { KnowHubClient } from './client.js'
import { isKnowHubClientError, isServerErrorCode } from './errors.js'

/**
 * A client error as the `KnowHubError` the tools expect. Server codes are kept; the
 * client's own (`network_error`, `timeout`, `aborted`, `invalid_response`, `http_error`)
 * become `internal_error` with `details.client_code`, and the message says what happened.
 * @example
 * toKnowHubError(clientError) // KnowHubError { code: 'not_found', details: { id, request_id, status: 404 } }
 */
export function toKnowHubError(error: unknown): unknown {
  if (!isKnowHubClientError(error)) return error
  const code: ErrorCode = isServerErrorCode(error.code) ? error.code : 'internal_error'
  const details: Record<string, unknown> = { ...error.details }
  if (error.requestId !== undefined) details.request_id = error.requestId
  if (error.status !== undefined) details.status = error.status
  if (code !== error.code) details.client_code = error.code
  if (error.serverCode !== undefined) details.server_code = error.serverCode
  if (error.retryAfterMs !== undefined) details.retry_after_s = Math.ceil(error.retryAfterMs / 1000)
  return new KnowHubError(code, error.message, details, { cause: error })
}

async function mapped<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw toKnowHubError(error)
  }
}

/**
 * The tools' backend over a KnowHub server. Queries are checked with the server's own
 * schemas before they are sent (a bad `top_k` fails at once, with its path); the server
 * checks everything again.
 * @example
 * import { createClient } from 'knowhub/client'
 * import { clientBackend } from 'knowhub/client'
 * const backend = clientBackend(createClient({ baseUrl: 'http://127.0.0.1:8420', token }))
 * await backend.search({ q: 'selenium login', top_k: 3 })
 */
export function clientBackend(client: KnowHubClient): ToolBackend {
  return {
    search: (query) => mapped(() => client.knowledge.search(parseWith(SearchInput, query, 'search query'))),
    save: (body) => mapped(() => client.knowledge.save(body)),
    get: (id) => mapped(() => client.knowledge.get(id)),
    update: (id, body) => mapped(() => client.knowledge.update(id, body)),
    batchUpdate: (body) => mapped(() => client.knowledge.batchUpdate(body)),
    list: (query) => mapped(() => client.knowledge.list(parseWith(ListInput, query, 'list query'))),
    slim: (body) => mapped(() => client.knowledge.slim(parseWith(SlimInput, body ?? {}, 'slim options'))),
    extract: (body) => mapped(() => client.knowledge.extract(body)),
    resourceSave: (body) => mapped(() => client.resources.save(body)),
    resourceGet: (id, options = {}) =>
      mapped(() => client.resources.get(id, options.includeSecret === undefined ? {} : { includeSecret: options.includeSecret })),
    goal: (body) => mapped(() => client.agent.goal(body)),
    agentContext: (body) => mapped(() => client.agent.context(body)),
    agentCompact: (agent, body) => mapped(() => client.agent.compact(agent, body)),
  }
}
