/**
 * The side-by-side harness's adapters (issue 44, bench/peers/): on a tiny set, with a stand-in
 * embedding server instead of the model (vectors of hashed character trigrams, so the test needs
 * no model and takes seconds), every installed system loads, searches in its scope and sends the
 * model's convention (`input_type` query and passage: the harness's proxy refuses a request
 * without it). A peer that is not installed (scripts/peers-setup.sh) is skipped with its reason.
 */
import { createServer, type Server } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPeerSets, SYSTEMS } from '../../bench/peers/index.js'

const DIM = 384

/** A unit vector of the text's hashed character trigrams. */
function vector(text: string): number[] {
  const v = new Array<number>(DIM).fill(0)
  const s = ` ${text.toLowerCase()} `
  for (let i = 0; i + 3 <= s.length; i++) {
    let h = 2166136261
    for (const c of s.slice(i, i + 3)) h = Math.imul(h ^ c.charCodeAt(0), 16777619)
    v[(h >>> 0) % DIM]! += 1
  }
  const norm = Math.hypot(...v) || 1
  return v.map((x) => x / norm)
}

const docs = [
  { id: 'a1', text: 'The deploy uses pnpm inside a docker build with a cached store.', meta: { conv: 'a' } },
  { id: 'a2', text: 'Postgres imports are fast with COPY and indexes built afterwards.', meta: { conv: 'a' } },
  { id: 'a3', text: 'Selenium logins pass with undetected-chromedriver and slow typing.', meta: { conv: 'a' } },
  { id: 'b1', text: 'Alice prefers green tea in the morning and coffee after lunch.', meta: { conv: 'b' } },
  { id: 'b2', text: 'Bob is training for a marathon in October.', meta: { conv: 'b' } },
]
const queries = [
  { id: 'q1', text: 'postgres import COPY indexes', meta: { conv: 'a' } },
  { id: 'q2', text: 'selenium chromedriver login', meta: { conv: 'a' } },
  { id: 'q3', text: 'marathon training October', meta: { conv: 'b' } },
]
const qrels = [
  { query_id: 'q1', doc_id: 'a2', relevance: 1 },
  { query_id: 'q2', doc_id: 'a3', relevance: 1 },
  { query_id: 'q3', doc_id: 'b2', relevance: 1 },
]

describe('bench/peers: the side-by-side harness', () => {
  let dir: string
  let server: Server
  let url: string
  const seen = new Set<string>()

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-peers-test-'))
    const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'
    writeFileSync(join(dir, 'corpus.jsonl'), jsonl(docs))
    writeFileSync(join(dir, 'queries.jsonl'), jsonl(queries))
    writeFileSync(join(dir, 'qrels.jsonl'), jsonl(qrels))
    server = createServer((request, response) => {
      let body = ''
      request.on('data', (c: Buffer) => (body += c.toString()))
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' })
        if (request.method === 'GET') return response.end(JSON.stringify({ data: [{ id: 'multilingual-e5-small-q4' }] }))
        const json = JSON.parse(body) as { input: string[]; input_type: string }
        seen.add(json.input_type)
        response.end(JSON.stringify({ data: json.input.map((t, index) => ({ index, embedding: vector(t) })) }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  })
  afterAll(() => {
    server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const systems = ['knowhub', 'langgraph', 'mem0', 'mastra']
  for (const id of systems) {
    const system = SYSTEMS.find((s) => s.id === id)!
    const missing = system.missing()
    it.skipIf(missing !== undefined)(`${system.name} loads, searches its scope and sends query/passage${missing ? ` (skipped: ${missing})` : ''}`, async () => {
      seen.clear()
      const { rows, proxy } = await runPeerSets({
        sets: ['tiny'],
        setDirs: { tiny: dir },
        systems: [id],
        upstream: url,
        absent: 1,
        log: () => {},
        print: () => {},
      })
      const row = rows[0]!
      expect(row.error).toBeUndefined()
      expect(row.docs).toBe(5)
      expect(row['recall@10']).toBeGreaterThan(0.6)
      expect(proxy.refused).toBe(0)
      expect([...seen].sort()).toEqual(['passage', 'query'])
    })
  }
})
