/**
 * Issue 39 (the Python client's finding, in the TypeScript client too): a redirect to another
 * origin never carries a request body. fetch re-sends a POST's body on a 307/308 to whatever
 * origin it names, a resource's `secure_body` included; the client's fetch requester follows no
 * redirect for a request with a body, and reads follow theirs without the token. Two real
 * servers on loopback: the hub that redirects, and the origin it points to.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/client.js'

interface Seen {
  method: string
  path: string
  authorization: string | undefined
  body: string
}

async function listen(handler: (req: IncomingMessage, body: string) => { status: number; headers?: Record<string, string>; body?: string }) {
  const seen: Seen[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body })
      const answer = handler(req, body)
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
      res.end(answer.body ?? '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { seen, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const SECRET = 'pg-S3cretBody-for-the-redirect-test'
let elsewhere: Awaited<ReturnType<typeof listen>>
let hub: Awaited<ReturnType<typeof listen>>
let code = 307

beforeAll(async () => {
  elsewhere = await listen(() => ({ status: 200, body: JSON.stringify({ status: 'ok', version: 'x' }) }))
  // Another origin for the same address: another host name.
  const away = elsewhere.url.replace('127.0.0.1', 'localhost')
  hub = await listen((req) => ({ status: code, headers: { location: `${away}${req.url ?? '/'}` } }))
})
afterAll(async () => {
  for (const s of [hub, elsewhere]) await new Promise((resolve) => s?.server.close(resolve))
})

describe('the client never sends a body to another origin (issue 39)', () => {
  it.each([307, 308, 302, 301])('a POST redirected (%i) elsewhere is not followed: its secure_body stays here', async (status) => {
    code = status
    elsewhere.seen.length = 0
    const kh = createClient({ baseUrl: hub.url, token: 'kh_redirect_test_token', retry: false })
    const saved = kh.resources.save({ id: 'creds/db', title: 'DB', secure_body: SECRET, content_type: 'credential' })
    await expect(saved).rejects.toMatchObject({ code: 'network_error' })
    expect(elsewhere.seen).toEqual([])
    expect(hub.seen.at(-1)?.body).toContain(SECRET)
  })

  it('a read follows its redirect, without the token', async () => {
    code = 307
    elsewhere.seen.length = 0
    const kh = createClient({ baseUrl: hub.url, token: 'kh_redirect_test_token', retry: false })
    expect(await kh.healthz()).toMatchObject({ status: 'ok' })
    expect(elsewhere.seen).toEqual([expect.objectContaining({ method: 'GET', path: '/healthz', authorization: undefined })])
  })
})
