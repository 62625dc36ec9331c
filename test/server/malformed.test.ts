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
