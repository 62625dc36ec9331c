/**
 * #15 item 9: SIGTERM on a real `knowhub start` process. A slow request in flight (knowledge
 * extraction, waiting on the OpenAI-compatible stub that answers after 2.5 s) finishes with its
 * answer; new connections are refused as soon as the signal arrives; the process exits 0 within
 * `server.shutdownTimeoutMs`; and the data folder's lock is released, so another process opens
 * the embedded database right away.
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub } from '../../src/app/open.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'

const SHUTDOWN_MS = 8_000
const proposal = { types: ['tool'], task: 'Install pnpm in Docker', content: 'Run corepack enable before pnpm install.', tags: {}, message_ids: ['m1'] }
let dir: string
let stub: OpenAIStub
let server: KnowHubProcess | undefined

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-sigterm-'))
  stub = await startOpenAIStub({
    chat: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      return String(request.messages[0]?.content).includes('free of duplicates') ? JSON.stringify({ decisions: [] }) : JSON.stringify({ entries: [proposal] })
    },
  })
  writeFileSync(join(dir, 'knowhub.config.json'), JSON.stringify({ server: { shutdownTimeoutMs: SHUTDOWN_MS } }))
})
afterAll(async () => {
  await server?.stop()
  await stub?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Whether a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

describe('SIGTERM on knowhub start', () => {
  it('finishes the request in flight, refuses new connections, exits 0 within shutdownTimeoutMs and releases the folder', async () => {
    const dataDir = join(dir, 'data')
    server = await startKnowHubProcess({
      env: {
        KNOWHUB_DATA_DIR: dataDir,
        KNOWHUB_CONFIG: join(dir, 'knowhub.config.json'),
        KNOWHUB_EMBEDDER: 'hashed',
        KNOWHUB_USER: 'dev',
        KNOWHUB_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'),
        KNOWHUB_LLM_URL: stub.url,
        KNOWHUB_LLM_MODEL: 'stub-chat',
        KNOWHUB_LOG_FORMAT: 'json',
      },
      // A start on a loaded machine (a 2-core box shared by test runs) can take a while.
      timeoutMs: 180_000,
    })
    const port = Number(new URL(server.url).port)
    expect(existsSync(`${join(dataDir, 'db')}.lock`)).toBe(true)
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server!.child.once('exit', (code, signal) => resolve({ code, signal })),
    )

    const slow = fetch(`${server.url}/api/knowledge/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ id: 'm1', role: 'user', content: 'pnpm was missing in the image; corepack enable fixed it' }], mode: 'save' }),
    })
    // The request is in flight once the server has asked the model.
    const deadline = Date.now() + 30_000
    while (stub.requestsTo('/v1/chat/completions').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(stub.requestsTo('/v1/chat/completions').length).toBe(1)

    const signalled = Date.now()
    server.child.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 300))
    expect(await refused(port)).toBe(true)

    const response = await slow
    expect(response.status).toBe(200)
    const body = (await response.json()) as { items: Array<{ action: string; id: string | null }> }
    expect(body.items).toHaveLength(1)
    expect(body.items[0]!.action).toBe('add')
    const savedId = body.items[0]!.id!

    const { code, signal } = await exited
    const took = Date.now() - signalled
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(took).toBeLessThan(SHUTDOWN_MS)
    expect(server.stderr.join('\n')).toContain('server.stopping')
    expect(server.stderr.join('\n')).not.toContain('server.shutdown_timeout')
    server = undefined

    // The lock is gone and the folder opens at once in another process (this one), with the write that finished during the shutdown.
    expect(existsSync(`${join(dataDir, 'db')}.lock`)).toBe(false)
    const hub = await openKnowHub({ dataDir, embedder: { provider: 'hashed' }, secrets: { key: Buffer.alloc(32, 5).toString('base64') } })
    try {
      expect((await hub.knowledge.get(savedId, { user: 'dev', permissions: ['read', 'write', 'admin'] })).task).toBe('Install pnpm in Docker')
    } finally {
      await hub.close()
    }
  }, 300_000)
})
