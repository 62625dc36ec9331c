/**
 * `GET /api/me` (the `users.me` operation): the caller's principal and role, the same through the
 * typed client, the port over HTTP, the port in this process and `knowhub whoami`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientBackend, createClient } from '../../src/client/index.js'
import { localBackend } from '../../src/app/backend.js'
import type { Principal } from '../../src/core/principal.js'
import { runCli, useCliEnv } from '../helpers/cli.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

const ann: Principal = { user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] }
const rita: Principal = { user: 'rita', org: 'acme', permissions: ['read'] }

let t: TestHub
let url: string
const tokens: Record<string, string> = {}

useCliEnv('me', { KNOWHUB_EMBEDDER: 'hashed' })

beforeAll(async () => {
  t = await openTestHub({ auth: { mode: 'token' } })
  for (const p of [ann, rita]) tokens[p.user!] = (await t.hub.tokens.create(p)).token
  url = (await t.start()).url
})
afterAll(async () => {
  await t?.close()
})

describe('GET /api/me', () => {
  it('answers each caller its own principal and role, alike over HTTP and in this process', async () => {
    expect(await createClient({ baseUrl: url, token: tokens.ann }).users.me()).toEqual({ principal: ann, role: 'admin' })
    expect(await clientBackend(createClient({ baseUrl: url, token: tokens.rita })).users.me()).toEqual({ principal: rita, role: 'reader' })
    expect(await localBackend(t.hub, rita).users.me()).toEqual({ principal: rita, role: 'reader' })
    expect((await localBackend(t.hub).users.me()).role).toBe('operator')
  })

  it('refuses a stranger, and a token without read', async () => {
    const stranger = await fetch(`${url}/api/me`, { headers: { authorization: 'Bearer kh_not_a_token' } })
    expect(stranger.status).toBe(401)
    const { token } = await t.hub.tokens.create({ user: 'sam', org: 'acme', permissions: ['secrets:read'] })
    expect(await fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status)).toBe(403)
  })

  it('knowhub whoami prints it', async () => {
    const run = await runCli('whoami', '--json')
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ principal: { user: 'local' }, role: 'operator' })
    expect((await runCli('whoami')).stdout).toBe('user:local (operator: read, write, secrets:read, admin, hub:admin)')
  })
})
