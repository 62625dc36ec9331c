/**
 * The CLI's HTTP transport for commands that run on a server: `node:http` instead of
 * `fetch`. Node's `fetch` loads undici (and its WebAssembly HTTP parser) on first use,
 * ~80 ms of a one-shot command's ~0.7 s; `node:http` is already in the binary. It only
 * moves bytes: the client's transport (src/client/http.ts) builds the request, retries,
 * validates and maps every failure, whichever requester it is given. `https:` URLs go
 * through `fetch` (TLS costs its own start-up anyway). Redirects are not followed: a KnowHub
 * server answers its API without them, and a 3xx comes back as an `http_error`.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { fetchRequester, type HttpResponse, type Requester } from '../client/http.js'

/** A fully read `node:http` response in the shape the transport reads. */
function responseOf(message: IncomingMessage, body: Buffer): HttpResponse {
  const status = message.statusCode ?? 0
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: message.statusMessage ?? '',
    headers: {
      get: (name) => {
        const value = message.headers[name.toLowerCase()]
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
      },
    },
    text: () => Promise.resolve(body.toString('utf8')),
    arrayBuffer: () => Promise.resolve(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer),
  }
}

/**
 * Sends one request with `node:http` and resolves once the whole body has arrived; the
 * request's signal (the caller's and the attempt's timeout) aborts it at any point.
 * @example
 * const response = await nodeHttpRequest('http://127.0.0.1:8420/healthz', { method: 'GET', headers: {}, body: null, signal: AbortSignal.timeout(5000) })
 */
export const nodeHttpRequest: Requester = (url, init) =>
  new Promise<HttpResponse>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers }
    if (init.body !== null) headers['content-length'] = Buffer.byteLength(init.body)
    const req = httpRequest(url, { method: init.method, headers, signal: init.signal }, (message) => {
      const chunks: Buffer[] = []
      message.on('data', (chunk: Buffer) => chunks.push(chunk))
      message.once('error', reject)
      message.once('end', () => resolve(responseOf(message, Buffer.concat(chunks))))
      message.once('close', () => {
        if (!message.complete) reject(Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' }))
      })
    })
    req.once('error', reject)
    req.end(init.body ?? undefined)
  })

/**
 * The requester for a base URL: `node:http` for `http:`, `fetch` otherwise.
 * @example
 * const kh = createClientOver(requesterFor(url), { baseUrl: url, token })
 */
export function requesterFor(baseUrl: string): Requester {
  return baseUrl.startsWith('http://') ? nodeHttpRequest : fetchRequester((url, init) => globalThis.fetch(url, init))
}
