/**
 * Issue 39 (Low): the redaction corpus through the real paths that call a model. At least 60
 * secret forms (English and Chinese: `curl -u`, `export VAR=` mid-line, "the password for X is",
 * 密码 phrases, Telegram bot tokens, TOTP seeds, …) and at least 60 harmless look-alikes go
 * through extraction and evolve (over HTTP), LLM slimming (over HTTP) and compaction, with an
 * OpenAI-compatible stub recording every request. Goals: 0 secret values in what the model is
 * sent; at most 5% of the harmless forms changed on the way (each must reach the model as written).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { redactSecrets } from '../../src/llm/secrets.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { harmlessForms, secretForms, type HarmlessForm, type SecretForm } from '../helpers/secret-cases.js'
import { client, openTestHub, type Client, type TestHub } from './helpers.js'

const secrets: SecretForm[] = secretForms()
const harmless: HarmlessForm[] = harmlessForms()

/** `text` as it reads once, twice and three times JSON-encoded (prompts carry data as JSON inside JSON). */
const encodings = (text: string): string[] => {
  const once = JSON.stringify(text).slice(1, -1)
  const twice = JSON.stringify(once).slice(1, -1)
  return [text, once, twice, JSON.stringify(twice).slice(1, -1)]
}

/** The secret forms some of whose values occur in `sent`. */
const leakedIn = (sent: string): SecretForm[] => secrets.filter((f) => f.secrets.some((v) => encodings(v).some((e) => sent.includes(e))))
/** The harmless forms that do not reach `sent` as written. */
const changedIn = (sent: string): HarmlessForm[] => harmless.filter((h) => !encodings(h.text).some((e) => sent.includes(e)))

describe('the redaction corpus (issue 39): its size', () => {
  it('holds at least 60 secret forms and 60 harmless look-alikes, in English and Chinese', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(60)
    expect(harmless.length).toBeGreaterThanOrEqual(60)
    for (const lang of ['en', 'zh'] as const) {
      expect(secrets.filter((f) => f.lang === lang).length).toBeGreaterThanOrEqual(15)
      expect(harmless.filter((f) => f.lang === lang).length).toBeGreaterThanOrEqual(15)
    }
  })
})

describe('the detector on the corpus, as plain text and JSON-escaped', () => {
  it.each(secrets.map((f) => [`${f.lang} ${f.kind}`, f] as const))('redacts %s', async (_name, f) => {
    for (const text of [f.text, JSON.stringify({ said: f.text })]) {
      const out = (await redactSecrets(text)).text
      for (const value of f.secrets) expect(out, out).not.toContain(JSON.stringify(value).slice(1, -1))
    }
  })

  it('leaves at most 5% of the harmless look-alikes changed (and names them)', async () => {
    const changed: string[] = []
    for (const h of harmless) {
      const out = (await redactSecrets(h.text)).text
      if (out !== h.text) changed.push(`${h.text} => ${out}`)
    }
    expect(changed.length / harmless.length, changed.join('\n')).toBeLessThanOrEqual(0.05)
  })
})

describe('the corpus through the paths that call the model', () => {
  let stub: OpenAIStub
  let t: TestHub
  let api: Client
  let home: string
  const rows: string[] = []
  /** Every form in one text, one a line. */
  const everything = [...secrets.map((f) => f.text), ...harmless.map((h) => h.text)].join('\n')

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'knowhub-corpus-home-'))
    stub = await startOpenAIStub({
      chat: (request: ChatRequest) => {
        const system = String(request.messages[0]?.content)
        if (system.includes('You extract reusable knowledge')) return JSON.stringify({ entries: [] })
        if (system.includes('free of duplicates')) return JSON.stringify({ decisions: [] })
        if (system.includes('You merge near-duplicate')) return JSON.stringify({ content: 'Merged.' })
        if (system.includes('You rewrite the content')) return JSON.stringify({ content: 'Evolved.', change: 'rewritten' })
        return '## Decisions\n- kept'
      },
    })
    t = await openTestHub({
      embedder: { provider: 'hashed', dimension: 64 },
      llm: { url: stub.url, model: 'm', retries: 0, timeoutMs: 30_000 },
      agent: { home },
    })
    const url = (await t.start()).url
    const token = (await t.hub.tokens.create({ user: 'alice', agent: 'coder', project: 'shop', org: 'acme', permissions: ['read', 'write'] })).token
    api = client(url, token)
  })
  afterAll(async () => {
    console.log(`redaction corpus (${secrets.length} secret forms, ${harmless.length} harmless), load ${loadavg()[0]!.toFixed(2)}:\n${rows.join('\n')}`)
    await t?.close()
    await stub?.close()
    rmSync(home, { recursive: true, force: true })
  })

  /** Runs `op`, then checks what the model was sent meanwhile: no secret, every harmless form but 5%. */
  async function measured(name: string, op: () => Promise<void>): Promise<void> {
    const before = stub.requests.length
    await op()
    const requests = stub.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'))
    const sent = JSON.stringify(requests.map((r) => r.body))
    const leaked = leakedIn(sent)
    const changed = changedIn(sent)
    rows.push(
      `${name.padEnd(11)} requests ${requests.length}  secret forms sent ${leaked.length}/${secrets.length}  harmless changed ${changed.length}/${harmless.length}`,
    )
    expect(requests.length).toBeGreaterThanOrEqual(1)
    expect(
      leaked.map((f) => f.kind),
      'secret forms that reached the model',
    ).toEqual([])
    expect(changed.length / harmless.length, changed.map((h) => h.text).join('\n')).toBeLessThanOrEqual(0.05)
  }

  it('extraction', async () => {
    const messages = [...secrets.map((f) => f.text), ...harmless.map((h) => h.text)].map((content, i) => ({ id: `m-${i}`, role: 'user', content }))
    await measured('extraction', async () => {
      const response = await api.post('/api/knowledge/extract', { messages, mode: 'propose' })
      expect(response.status, response.text).toBe(200)
    })
  }, 240_000) // the whole corpus through a model path: sized for a loaded two-core machine

  it('evolve', async () => {
    const created = await api.post('/api/knowledge', {
      task: 'Deploy the shop',
      content: 'Run the deploy script.',
      types: ['strategy'],
      scopes: ['project:shop'],
    })
    expect(created.status).toBe(201)
    await measured('evolve', async () => {
      const response = await api.put(`/api/knowledge/${created.body.id}`, { evolve_feedback: `What we learned:\n${everything}` })
      expect(response.status, response.text).toBe(200)
    })
  }, 240_000) // the whole corpus through a model path: sized for a loaded two-core machine

  it('slim with an LLM', async () => {
    for (const n of [1, 2]) {
      const r = await api.post('/api/knowledge', {
        task: 'Operations notes for the shop',
        content: `${everything}${n === 2 ? '\nThen open orders.' : ''}`,
        types: ['tool'],
        scopes: ['project:shop'],
      })
      expect(r.status, r.text).toBe(201)
    }
    await measured('slim', async () => {
      const response = await api.post('/api/knowledge/slim', { threshold: 0.5, min_overlap: 0.3 })
      expect(response.status, response.text).toBe(200)
      expect(response.body.groups.length).toBeGreaterThanOrEqual(1)
    })
  }, 240_000) // the whole corpus through a model path: sized for a loaded two-core machine

  it('compaction', async () => {
    const history = [...secrets.map((f) => f.text), ...harmless.map((h) => h.text)].flatMap((content, i) => [
      { role: 'user' as const, content: `Step ${i}: ${content}` },
      { role: 'assistant' as const, content: `Done with step ${i}.` },
    ])
    const alice = Principal.parse({ user: 'alice', agent: 'coder', project: 'shop', org: 'acme', permissions: ['read', 'write'] })
    await measured('compaction', async () => {
      const result = await t.hub.agent.compact({ agent: 'coder', history, threshold: 200, keep_recent: 4 }, alice)
      expect(result.compacted).toBe(true)
    })
  }, 240_000) // the whole corpus through a model path: sized for a loaded two-core machine
})
