/**
 * A real OpenAI-compatible HTTP server for tests, on 127.0.0.1 and a free port.
 *
 * - `POST /v1/embeddings`: deterministic vectors from KnowHub's hashed embedder
 *   (so similar texts get similar vectors), `dimensions` honoured, or your own
 *   `embed` function.
 * - `POST /v1/chat/completions`: answers with your `chat` responder (a string
 *   becomes a standard `chat.completion`; `stream: true` gets server-sent events).
 * - `GET /v1/models`: lists the stub's models.
 *
 * Every request is recorded (method, path, headers, parsed body) before anything
 * else, so tests can assert batching, auth headers and retry counts. Queue
 * failures (`failNext`), hangs (`hangNext`) or any raw response (`respondNext`)
 * to test error paths.
 *
 * @example
 * const stub = await startOpenAIStub({ dimension: 8, chat: (req) => `echo ${req.messages.at(-1)?.content}` })
 * try {
 *   const embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: stub.url, model: 'm', batchSize: 64, timeoutMs: 1000 })
 * } finally {
 *   await stub.close()
 * }
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHashedEmbedder } from '../../src/embed/hashed.js'

/** One request the stub received. */
export interface StubRequest {
  method: string
  /** Path without the query string, e.g. `/v1/embeddings`. */
  path: string
  headers: IncomingHttpHeaders
  /** Parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  body: unknown
}

/** The body of a chat completion request, as far as the stub reads it. */
export interface ChatRequest {
  model: string
  messages: Array<{ role: string; content: unknown; [key: string]: unknown }>
  stream?: boolean
  [key: string]: unknown
}

/** A canned response: status, JSON (or string) body, extra headers. */
export interface StubResponse {
  status: number
  body?: unknown
  headers?: Record<string, string>
}

export interface OpenAIStubOptions {
  /** Dimension of the embeddings when the request does not ask for `dimensions` (default 16, at least 8). */
  dimension?: number
  /** Custom embeddings: one vector per input text. Default: the hashed embedder's vectors. */
  embed?: (input: string[], body: Record<string, unknown>) => number[][] | Promise<number[][]>
  /** Answers chat completions: a string is the assistant's message; an object is sent as the JSON body. */
  chat?: (request: ChatRequest) => string | Record<string, unknown> | Promise<string | Record<string, unknown>>
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get 401. */
  apiKey?: string
  /** Return embedding items in reverse order (clients must sort by `index`). */
  reverseOrder?: boolean
  /** Model names listed by `GET /v1/models` (default ['stub-embed', 'stub-chat']). */
  models?: string[]
}

export interface OpenAIStub {
  /** API root including `/v1`, e.g. `http://127.0.0.1:43211/v1`. */
  readonly url: string
  /** Every request received, in order. */
  readonly requests: StubRequest[]
  /** Requests to one path, e.g. `requestsTo('/v1/embeddings')`. */
  requestsTo(path: string): StubRequest[]
  /** The next `count` requests fail with `status` (default 500), optionally with a `Retry-After` header. */
  failNext(count: number, status?: number, options?: { retryAfter?: string; body?: unknown }): void
  /** The next `count` requests get no answer until the client gives up or the stub closes. */
  hangNext(count: number): void
  /** The next request gets exactly this response. */
  respondNext(response: StubResponse): void
  /** Replaces the chat responder. */
  setChat(chat: OpenAIStubOptions['chat']): void
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

type Planned = StubResponse | 'hang'

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  })
  res.end(text)
}

function apiError(message: string, type: string): { error: { message: string; type: string } } {
  return { error: { message, type } }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Starts the stub. Always `close()` it (or use `await using`).
 */
export async function startOpenAIStub(options: OpenAIStubOptions = {}): Promise<OpenAIStub> {
  const defaultDimension = options.dimension ?? 16
  const embedders = new Map<number, ReturnType<typeof createHashedEmbedder>>()
  const hashed = (dimension: number): ReturnType<typeof createHashedEmbedder> => {
    let embedder = embedders.get(dimension)
    if (!embedder) {
      embedder = createHashedEmbedder({ dimension })
      embedders.set(dimension, embedder)
    }
    return embedder
  }
  const requests: StubRequest[] = []
  const planned: Planned[] = []
  let chat = options.chat
  const models = options.models ?? ['stub-embed', 'stub-chat']

  async function embeddings(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const rawInput = body.input
    const input = typeof rawInput === 'string' ? [rawInput] : rawInput
    if (!Array.isArray(input) || !input.every((item) => typeof item === 'string') || typeof body.model !== 'string') {
      sendJson(res, 400, apiError("'model' (string) and 'input' (string or string[]) are required", 'invalid_request_error'))
      return
    }
    const requested = body.dimensions
    const dimension = typeof requested === 'number' ? requested : defaultDimension
    const vectors = options.embed
      ? await options.embed(input, body)
      : (await hashed(dimension).embed(input, { kind: 'document' })).map((vector) => Array.from(vector))
    const data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }))
    if (options.reverseOrder) data.reverse()
    const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0)
    sendJson(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } })
  }

  async function chatCompletions(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    if (!chat) {
      sendJson(res, 501, apiError('The stub has no chat responder', 'server_error'))
      return
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      sendJson(res, 400, apiError("'model' and 'messages' are required", 'invalid_request_error'))
      return
    }
    const request = body as ChatRequest
    const answer = await chat(request)
    if (typeof answer !== 'string') {
      sendJson(res, 200, answer)
      return
    }
    const id = `chatcmpl-stub-${requests.length}`
    const created = Math.floor(Date.now() / 1000)
    if (request.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
      res.write(chunk({ role: 'assistant', content: answer }, null))
      res.write(chunk({}, 'stop'))
      res.end('data: [DONE]\n\n')
      return
    }
    const promptTokens = JSON.stringify(request.messages).length
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: answer.length, total_tokens: promptTokens + answer.length },
    })
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://stub').pathname
    const body = await readBody(req)
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body })

    const plan = planned.shift()
    if (plan === 'hang') return
    if (plan) {
      sendJson(res, plan.status, plan.body ?? apiError(`stub failure ${plan.status}`, 'server_error'), plan.headers)
      return
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      sendJson(res, 401, apiError('Incorrect API key provided', 'invalid_request_error'))
      return
    }
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'stub' })) })
      return
    }
    if (req.method !== 'POST' || (path !== '/v1/embeddings' && path !== '/v1/chat/completions')) {
      sendJson(res, 404, apiError(`No route ${req.method ?? ''} ${path}`, 'invalid_request_error'))
      return
    }
    if (!isRecord(body)) {
      sendJson(res, 400, apiError('The body must be a JSON object', 'invalid_request_error'))
      return
    }
    if (path === '/v1/embeddings') await embeddings(body, res)
    else await chatCompletions(body, res)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, apiError(`stub crashed: ${String(error)}`, 'server_error'))
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  let closed: Promise<void> | undefined
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      // Hung requests keep their sockets open; end them so close() returns.
      server.closeAllConnections()
    })
    return closed
  }

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    requestsTo: (path) => requests.filter((request) => request.path === path),
    failNext(count, status = 500, failOptions = {}) {
      const headers: Record<string, string> = failOptions.retryAfter === undefined ? {} : { 'retry-after': failOptions.retryAfter }
      for (let i = 0; i < count; i++) planned.push({ status, body: failOptions.body, headers })
    },
    hangNext(count) {
      for (let i = 0; i < count; i++) planned.push('hang')
    },
    respondNext(response) {
      planned.push(response)
    },
    setChat(next) {
      chat = next
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}
