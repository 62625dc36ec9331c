/**
 * `knowhub start` as a user sees it: a banner with the URL, the data folder and the embedder;
 * request lines for people (KNOWHUB_LOG_FORMAT=pretty, the default on a terminal) or as JSON
 * lines (the default when stderr is not a terminal, as here); a bad format is refused in words.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startKnowHubProcess } from '../helpers/knowhub-process.js'
import { runCli } from '../helpers/cli.js'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-start-logs-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const env = (name: string, format?: string): Record<string, string> => ({
  KNOWHUB_DATA_DIR: join(dir, name),
  KNOWHUB_EMBEDDER: 'hashed',
  KNOWHUB_EMBED_DIM: '64',
  DATABASE_URL: '',
  ...(format ? { KNOWHUB_LOG_FORMAT: format } : {}),
})

/** Waits until `lines` has one matching `pattern` (the log is written as requests finish). */
async function line(lines: string[], pattern: RegExp): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const found = lines.find((l) => pattern.test(l))
    if (found) return found
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no line matches ${pattern}:\n${lines.join('\n')}`)
}

describe('knowhub start for people', () => {
  it('prints the data folder and embedder in its banner, and pretty request lines with KNOWHUB_LOG_FORMAT=pretty', async () => {
    const server = await startKnowHubProcess({ env: env('pretty', 'pretty') })
    try {
      expect(await line(server.stdout, /^ {2}data: /)).toContain(`data: ${join(dir, 'pretty')} (embedded database) · embedder: hashed`)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      const request = await line(server.stderr, /GET \/healthz 200/)
      expect(request).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: GET \/healthz 200 [\d.]+ ms {2}\((local|-), req_\w+\)$/)
      expect(() => JSON.parse(request)).toThrow()
    } finally {
      await server.stop()
    }
  })

  it('writes JSON lines when stderr is not a terminal', async () => {
    const server = await startKnowHubProcess({ env: env('json') })
    try {
      await fetch(`${server.url}/healthz`)
      const request = JSON.parse(await line(server.stderr, /"path":"\/healthz"/)) as Record<string, unknown>
      expect(request).toMatchObject({ msg: 'http.request', method: 'GET', path: '/healthz', status: 200 })
    } finally {
      await server.stop()
    }
  })

  it('refuses an unknown KNOWHUB_LOG_FORMAT in words', async () => {
    const saved = process.env.KNOWHUB_LOG_FORMAT
    process.env.KNOWHUB_LOG_FORMAT = 'xml'
    try {
      const run = await runCli('status')
      expect(run.code).not.toBe(0)
      expect(run.stderr).toContain('KNOWHUB_LOG_FORMAT must be json or pretty, got "xml"')
    } finally {
      if (saved === undefined) delete process.env.KNOWHUB_LOG_FORMAT
      else process.env.KNOWHUB_LOG_FORMAT = saved
    }
  })
})
