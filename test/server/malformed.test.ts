/**
 * Requests Node's HTTP parser refuses get a JSON error that says what to fix: raw UTF-8 in the
 * URL (curl sends it as typed) is a 400 naming percent-encoding; the server keeps serving.
 */
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestHub, type TestHub } from './helpers.js'

let t: TestHub
let port: number

beforeAll(async () => {
  t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
  port = Number(new URL((await t.start()).url).port)
})
afterAll(async () => t?.close())

/** Sends raw bytes and reads the whole answer (the server closes the connection). */
function raw(bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes))
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    socket.on('error', reject)
  })
}

describe('requests the HTTP parser refuses', () => {
  it('answers raw UTF-8 in the URL with a 400 JSON body naming percent-encoding', async () => {
    const request = Buffer.concat([
      Buffer.from('GET /api/knowledge/search?q='),
      Buffer.from('日本', 'utf8'),
      Buffer.from(` HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`),
    ])
    const answer = await raw(request)
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string; details: { reason: string } } }
    expect(body.error.code).toBe('validation_error')
    expect(body.error.message).toContain('percent-encode')
    expect(body.error.details.reason).toMatch(/^HPE_/)
    // The same query, percent-encoded, is answered.
    const ok = await fetch(`http://127.0.0.1:${port}/api/knowledge/search?q=${encodeURIComponent('日本')}`)
    expect(ok.status).toBe(200)
  })
})

describe('bodies that are not what they claim (issue 27)', () => {
  it('answers a body that is not UTF-8 with 400 validation_error and stores nothing (it was stored as U+FFFD)', async () => {
    const before = await t.hub.knowledge.count()
    const json = (task: Buffer) => Buffer.concat([Buffer.from('{"task":"'), task, Buffer.from('","content":"c","types":["plan"]}')])
    for (const [path, body] of [
      ['/api/knowledge', json(Buffer.from([0x63, 0x61, 0x66, 0xe9]))], // "café" in Latin-1
      ['/api/knowledge', json(Buffer.from([0xed, 0xa0, 0x80]))], // a lone surrogate, encoded
      ['/api/resource', Buffer.concat([Buffer.from('{"id":"x/y","title":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])],
      ['/api/knowledge/import', Buffer.concat([json(Buffer.from([0xc3])), Buffer.from('\n')])],
    ] as const) {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      expect(r.status, path).toBe(400)
      expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'validation_error',
        message: expect.stringContaining('UTF-8'),
      })
    }
    expect(await t.hub.knowledge.count()).toBe(before)
    // Valid UTF-8 (and a BOM) is taken as it is.
    const ok = await fetch(`http://127.0.0.1:${port}/api/knowledge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: json(Buffer.from('café', 'utf8')),
    })
    expect(ok.status).toBe(201)
    expect(((await ok.json()) as { task: string }).task).toBe('café')
  })

  it('logs an upload the client aborted as an abort, not as a 500 at error level', async () => {
    const logged = t.logs.length
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /api/knowledge HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"task":"half`)
        setTimeout(() => {
          socket.destroy()
          resolve()
        }, 150)
      })
      socket.on('error', reject)
    })
    const lines = () => t.logs.slice(logged).map((line) => JSON.parse(line) as { level: string; message: string; status?: number })
    await expect.poll(() => lines().some((l) => l.message === 'http.request'), { timeout: 5000 }).toBe(true)
    const seen = lines()
    expect(
      seen.filter((l) => l.level === 'error'),
      JSON.stringify(seen),
    ).toEqual([])
    expect(seen.find((l) => l.message === 'http.request')?.status).toBe(499)
    expect(seen.some((l) => l.message === 'http.client_aborted')).toBe(true)
    // The server keeps serving.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
  })
})
