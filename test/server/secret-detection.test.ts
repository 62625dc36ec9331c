/**
 * Issue 27, finding 6: real-looking credentials of every kind listed go through extraction
 * (over HTTP), evolve (over HTTP), LLM slimming (over HTTP) and compaction, with the test's
 * OpenAI-compatible server logging every request. The model is scripted to copy secrets back and
 * to write a `kh_…` token of its own. Counted: secret values in the model requests, and in what
 * the operations stored (entries, versions, resources' public fields, the compact memory). Both
 * must be 0.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { sql } from '../../src/store/sql.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { secretCases, type SecretCase } from '../helpers/secret-cases.js'
import { client, openTestHub, type Client, type TestHub } from './helpers.js'

/** Occurrences of any of `secrets` in `text`. */
function count(text: string, secrets: readonly string[]): number {
  return secrets.reduce((n, s) => n + text.split(s).length - 1, 0)
}

describe('secrets never reach the model nor the store (issue 27)', () => {
  let stub: OpenAIStub
  let t: TestHub
  let api: Client
  let url: string
  let token: string
  let home: string
  const cases: SecretCase[] = secretCases()
  const secrets = cases.flatMap((c) => c.secrets)
  /** A token the model writes although it never saw one. */
  const modelToken = `kh_${randomBytes(32).toString('base64url')}`
  const leaked = [...secrets, modelToken]
  /** A model that copies every secret of the test back, whatever it was sent. */
  const copying = `Copied: ${cases.map((c) => c.text).join('\n')}\nand the hub token ${modelToken}`
  const slimText = `Log in to the shop admin with the deploy credentials. ${cases[0]!.text} ${cases[6]!.text}`
  const counts: Record<string, { requests: number; sent: number; stored: number; kinds: string[] }> = {}
  /** The kinds whose values occur in `text` (to say what leaked when a count is not 0). */
  const kindsIn = (text: string): string[] => [
    ...new Set([...cases.filter((c) => count(text, c.secrets) > 0).map((c) => c.kind), ...(text.includes(modelToken) ? ['model-written kh_ token'] : [])]),
  ]

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'knowhub-agent-home-'))
    stub = await startOpenAIStub({
      chat: (request: ChatRequest) => {
        const system = String(request.messages[0]?.content)
        if (system.includes('You extract reusable knowledge')) {
          // The model copies the conversation it was shown (secrets as markers: it never saw one) and
          // writes a token of its own; issue 43: it may only save what the conversation says.
          const shown = String(request.messages[1]?.content)
          const said = (JSON.parse(shown.slice(shown.indexOf('\n') + 1)) as Array<{ content: string }>).map((m) => m.content).join('\n')
          return JSON.stringify({
            entries: cases.map((c, i) => ({
              types: ['tool'],
              task: `Use the ${c.kind} (${i})`,
              content: `Use [SECRET_${i + 1}] here. Copied: ${said}\nand the hub token ${modelToken}`,
              tags: { note: `token ${modelToken}` },
              message_ids: [`m-${i}`],
            })),
          })
        }
        if (system.includes('free of duplicates')) return JSON.stringify({ decisions: [] })
        // The merged text copies the entries' secrets (the slim test's entries: cases 0 and 6) and writes a token of its own.
        if (system.includes('You merge near-duplicate'))
          return JSON.stringify({ content: `Merged. ${slimText} Then open orders. Copied: and the hub token ${modelToken}` })
        if (system.includes('You rewrite the content')) return JSON.stringify({ content: `Evolved. ${copying}`, change: `added ${modelToken}` })
        return `## Decisions\n- ${copying}`
      },
    })
    t = await openTestHub({
      embedder: { provider: 'hashed', dimension: 64 },
      // Generous: the decision requests carry earlier entries (tens of KB) on a loaded 2-core machine.
      llm: { url: stub.url, model: 'm', retries: 0, timeoutMs: 30_000 },
      agent: { home },
    })
    url = (await t.start()).url
    token = (await t.hub.tokens.create({ user: 'alice', agent: 'coder', project: 'shop', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })).token
    api = client(url, token)
  })
  afterAll(async () => {
    const rows = Object.entries(counts).map(
      ([op, c]) =>
        `${op.padEnd(11)} requests ${String(c.requests).padStart(3)}  secrets sent ${c.sent}  secrets stored ${c.stored}${c.kinds.length ? `  (${c.kinds.join(', ')})` : ''}`,
    )
    console.log(`secret detection (${cases.length} kinds, ${secrets.length} values + 1 model-written kh_ token):\n${rows.join('\n')}`)
    await t?.close()
    await stub?.close()
    rmSync(home, { recursive: true, force: true })
  })

  /** Entries the test's user wrote itself (slim's originals): their texts are theirs, not an operation's. */
  const userWritten: string[] = []

  /** Every text KnowHub stored: entries (all text fields), versions, resources' public fields. */
  async function storedText(): Promise<string> {
    const db = t.hub.store.db
    const entries = await db.query(sql`SELECT to_jsonb(k) AS row FROM knowledge k WHERE NOT (id = ANY(${userWritten}::text[]))`)
    const feedback = await db.query(sql`SELECT to_jsonb(f) AS row FROM knowledge_feedback f WHERE NOT (knowledge_id = ANY(${userWritten}::text[]))`)
    const versions = await db.query(sql`SELECT task, content, tags, reason FROM knowledge_version WHERE NOT (knowledge_id = ANY(${userWritten}::text[]))`)
    const resources = await db.query(sql`SELECT id, title, body, metadata FROM resources`)
    return JSON.stringify([entries, feedback, versions, resources])
  }

  /** Runs `op` and counts its model requests and the secrets in them and in what was stored since. */
  async function measured(name: string, op: () => Promise<void>, stored: () => Promise<string>): Promise<void> {
    const before = stub.requests.length
    await op()
    const requests = stub.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'))
    const sent = JSON.stringify(requests.map((r) => r.body))
    const kept = await stored()
    counts[name] = { requests: requests.length, sent: count(sent, leaked), stored: count(kept, leaked), kinds: kindsIn(sent + kept) }
  }

  it('the MCP tool knowledge_extract takes secrets_scope: the secrets go where the caller said (run first, on an empty store)', async () => {
    const mcp = new McpClient({ name: 'knowhub-secrets-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    const before = stub.requests.length
    try {
      const messages = [{ id: 'm-0', role: 'user', content: cases[6]!.text }]
      const result = (await mcp.callTool({ name: 'knowledge_extract', arguments: { messages, mode: 'save', secrets_scope: 'project' } })) as CallToolResult
      expect(result.isError, result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')).toBeFalsy()
    } finally {
      await mcp.close()
    }
    expect(count(JSON.stringify(stub.requests.slice(before).map((r) => r.body)), leaked)).toBe(0)
    const [newest] = await t.hub.store.db.query<{ scopes: string[]; owner: string }>(sql`SELECT scopes, owner FROM resources ORDER BY created_at DESC LIMIT 1`)
    expect(newest).toMatchObject({ scopes: ['project:shop'], owner: 'agent:coder' })
  })

  it('extraction: nothing reaches the model, nothing is stored outside the user-scoped secure_body', async () => {
    const messages = cases.map((c, i) => ({ id: `m-${i}`, role: 'user', content: c.text }))
    let body: { resources_created: string[]; items: Array<{ id: string }> } | undefined
    await measured(
      'extraction',
      async () => {
        const response = await api.post('/api/knowledge/extract', { messages, mode: 'save' })
        expect(response.status).toBe(200)
        body = response.body
      },
      storedText,
    )
    expect(counts.extraction!.requests).toBeGreaterThanOrEqual(1)
    expect(counts.extraction).toMatchObject({ sent: 0, stored: 0 })
    expect(body!.items).toHaveLength(cases.length)
    // The secrets are kept, but only in one encrypted secure_body scoped to the user.
    const [resourceId] = body!.resources_created
    const resource = await api.get(`/api/resource/${resourceId}`)
    expect(resource.body).toMatchObject({ scopes: ['user:alice'], owner: 'user:alice' })
    for (const secret of secrets.slice(0, 3)) expect(resource.body.secure_body).toContain(secret)
    const raw = JSON.stringify(await t.hub.store.db.query(sql`SELECT secure_body FROM resources`))
    expect(count(raw, leaked)).toBe(0)
  })

  it('evolve: the feedback is redacted for the model and the rewrite before it is stored', async () => {
    const created = await api.post('/api/knowledge', {
      task: 'Deploy the shop',
      content: 'Run the deploy script from the release branch.',
      types: ['strategy'],
      scopes: ['project:shop'],
    })
    expect(created.status).toBe(201)
    await measured(
      'evolve',
      async () => {
        const response = await api.put(`/api/knowledge/${created.body.id}`, { evolve_feedback: `It needs credentials: ${cases.map((c) => c.text).join('\n')}` })
        expect(response.status).toBe(200)
        expect(response.body.content).toContain('Evolved.')
      },
      storedText,
    )
    expect(counts.evolve).toMatchObject({ requests: 1, sent: 0, stored: 0 })
  })

  it('slim with an LLM: the entries are redacted for the model and the merged text before it is stored', async () => {
    // The originals are the user's own texts (their secrets are theirs to store); what slim
    // sends and what it writes is counted: the merged entry's text.
    const text = slimText
    const ids: string[] = []
    for (const n of [1, 2]) {
      const r = await api.post('/api/knowledge', {
        task: 'Log in to the shop admin',
        content: `${text}${n === 2 ? ' Then open orders.' : ''}`,
        types: ['tool'],
        scopes: ['project:shop'],
      })
      ids.push(r.body.id as string)
    }
    userWritten.push(...ids)
    let merged: string | undefined
    await measured(
      'slim',
      async () => {
        const response = await api.post('/api/knowledge/slim', { threshold: 0.5, min_overlap: 0.3 })
        expect(response.status).toBe(200)
        const group = (response.body.groups as Array<{ kept_id: string; merged_ids: string[] }>).find((g) => g.merged_ids.includes(ids[0]!))
        merged = group!.kept_id
        // The merged entry's versions are the originals' texts (slim loses nothing): the user's
        // too. Its own text, the model's, is counted below.
        userWritten.push(merged)
      },
      async () => `${JSON.stringify(await t.hub.store.db.query(sql`SELECT task, content, tags FROM knowledge WHERE id = ${merged!}`))}${await storedText()}`,
    )
    expect(counts.slim!.requests).toBeGreaterThanOrEqual(1)
    expect(counts.slim).toMatchObject({ sent: 0, stored: 0 })
    expect((await api.get(`/api/knowledge/${merged!}`)).body.content).toContain('Merged.')
  })

  it('compaction: the history is redacted for the model, the memory and the extraction before they are stored', async () => {
    const history = cases.flatMap((c, i) => [
      { role: 'user' as const, content: `Step ${i}: ${c.text} ${'and some more context about the shop deployment. '.repeat(8)}` },
      { role: 'assistant' as const, content: `Done with step ${i}.` },
    ])
    const alice = Principal.parse({ user: 'alice', agent: 'coder', project: 'shop', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
    await measured(
      'compaction',
      async () => {
        const result = await t.hub.agent.compact({ agent: 'coder', history, threshold: 200, keep_recent: 10 }, alice)
        expect(result.compacted).toBe(true)
      },
      async () => `${await storedText()}${readFileSync(join(home, 'coder', 'compact.md'), 'utf8')}`,
    )
    expect(counts.compaction!.requests).toBeGreaterThanOrEqual(1)
    expect(counts.compaction).toMatchObject({ sent: 0, stored: 0 })
  })
})
