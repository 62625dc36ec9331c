/**
 * The HTTP adapter of the one port (`KnowHubBackend`, src/core/backend.ts): each method is one
 * call of the typed client, so the CLI, the agent tools and MCP run against a server exactly as
 * in this process (`localBackend`). Failures reject with a `KnowHubError` as the port promises:
 * the server's code, message and details, plus the request id.
 */
import { KnowHubError, type ErrorCode } from '../core/errors.js'
import { storedAgentWithFiles, type AgentBackend, type KnowHubBackend, type LocalAgentFiles } from '../core/backend.js'
import type { KnowHubClient } from './client.js'
import { isKnowHubClientError, isServerErrorCode } from './errors.js'
import { pathParams, type OperationGroup, type PortOf } from '../core/operation.js'
import { ADMIN_OPERATIONS, AGENT_OPERATIONS, KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, TOKEN_OPERATIONS, USER_OPERATIONS } from '../core/operations.js'

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
 * A group of operations as port methods over the client's methods: each the client's call,
 * its answer mapped back to the service's result, its failure to a `KnowHubError`.
 */
function portCalls<G extends OperationGroup>(methods: object, group: G): PortOf<G> {
  const port: Record<string, unknown> = {}
  for (const [name, op] of Object.entries(group)) {
    const method = (methods as Record<string, (...args: unknown[]) => Promise<unknown>>)[op.client ?? name]!
    const slots = pathParams(op.path).length + (op.input ? 1 : 0) + (op.options ? 1 : 0)
    port[name] = async (...args: unknown[]) => {
      // A slow operation (a forget rewrites tables): its own timeout, after the arguments in their places.
      const sent = op.timeoutMs ? [...args.slice(0, slots), ...Array<undefined>(Math.max(0, slots - args.length)), { timeoutMs: op.timeoutMs }] : args
      const body = await mapped(() => method(...sent))
      return op.wire && !op.unwrap ? op.wire.back(body) : body
    }
  }
  return port as PortOf<G>
}

/** Options of {@link clientBackend}. */
export interface ClientBackendOptions {
  /**
   * A local agent's folder, read by this process (the CLI beside a server: `stored: false`);
   * loaded on first use. Absent: an agent is always the one stored on the server.
   */
  agentFiles?: () => Promise<LocalAgentFiles>
}

/** The agent operations over HTTP: the agent stored on the server, or (with `agentFiles`) the folder here with the server's knowledge and LLM. */
function agentMethods(client: KnowHubClient, options: ClientBackendOptions): AgentBackend {
  const files = async (): Promise<LocalAgentFiles> => {
    if (!options.agentFiles)
      throw new KnowHubError('validation_error', `The KnowHub server at ${client.baseUrl} keeps stored agents only: an agent folder is read on its own machine`)
    return options.agentFiles()
  }
  return {
    ...portCalls(client.agent, AGENT_OPERATIONS),
    context: async ({ stored, ...input }, config = {}) => {
      if (stored === false) {
        return (await files()).context(input, config, (task, language) =>
          mapped(() => client.agent.knowledge({ ...(task !== undefined ? { task } : {}), language })),
        )
      }
      const { home, template, knowledgeFiles, ...rest } = input
      if (home !== undefined || template !== undefined) throw storedAgentWithFiles(client.baseUrl)
      return mapped(() => client.agent.context({ ...rest, ...(knowledgeFiles && knowledgeFiles.length > 0 ? { knowledge_files: knowledgeFiles } : {}) }))
    },
    compact: async ({ stored, ...input }, config = {}) => {
      if (stored === false) return (await files()).compact(input, config, (body) => mapped(() => client.agent.compactHeld(body)))
      const { agent, home, ...rest } = input
      if (home !== undefined) throw storedAgentWithFiles(client.baseUrl)
      return mapped(() => client.agent.compact(agent, rest))
    },
  }
}

/**
 * The one port (`KnowHubBackend`) over a KnowHub server, through the typed client, as the
 * client's token. Requests go as they are: the server's services check them.
 * @example
 * import { createClient } from 'knowhub/client'
 * import { clientBackend } from 'knowhub/client'
 * const backend = clientBackend(createClient({ baseUrl: 'http://127.0.0.1:8420', token }))
 * await backend.knowledge.search({ q: 'selenium login', top_k: 3 })
 */
export function clientBackend(client: KnowHubClient, options: ClientBackendOptions = {}): KnowHubBackend & { readonly agent: AgentBackend } {
  const k = client.knowledge
  return {
    url: client.baseUrl,
    knowledge: {
      ...portCalls(k, KNOWLEDGE_OPERATIONS),
      supersede: (id, input) => mapped(() => k.supersede(id, input)),
      exportJsonl: async function* () {
        const text = await mapped(() => k.exportJsonl())
        for (const line of text.split('\n')) if (line.trim() !== '') yield line
      },
      // Progress is this process's: a server reports when it is done.
      importJsonl: async (lines, { onProgress: _local, ...query } = {}) => {
        const all: string[] = []
        for await (const line of lines) all.push(line)
        return mapped(() => k.importJsonl(all.join('\n'), query))
      },
    },
    folder: {
      export: async () => (await mapped(() => client.folder.export())).files,
      import: (files, query) => mapped(() => client.folder.import(files, query)),
      sync: (input) => mapped(() => client.folder.sync(input)),
    },
    resources: {
      ...portCalls(client.resources, RESOURCE_OPERATIONS),
      // The API's answer does not name the owner: find the resource first, then delete exactly that one.
      delete: async (id, target = {}) => {
        const { owner } = await mapped(() => client.resources.get(id, { includeSecret: false, ...target }))
        await mapped(() => client.resources.delete(id, { owner }))
        return { owner }
      },
    },
    agent: agentMethods(client, options),
    users: portCalls(client.users, USER_OPERATIONS),
    admin: {
      ...portCalls(client.admin, ADMIN_OPERATIONS),
      // A large database takes a while to dump and send: ten minutes, no retry of a half-sent body.
      backup: () => mapped(() => client.admin.backup({ timeoutMs: 600_000 })),
      tokens: portCalls(client.admin.tokens, TOKEN_OPERATIONS),
    },
  }
}
