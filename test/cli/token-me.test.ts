/**
 * `knowhub token create --me` (issue 42): on the server's machine, the person who saved entries
 * as the local principal makes a token of their own — the same ids and permissions, hub
 * operator included — so that signing in to the dashboard shows what they saved. Any id or
 * permission beside `--me` is refused.
 */
import { describe, expect, it } from 'vitest'
import { openKnowHub } from '../../src/app/open.js'
import { runCli, useCliEnv } from '../helpers/cli.js'

const env = useCliEnv('token-me', { KNOWHUB_EMBEDDER: 'hashed' })

describe('knowhub token create --me', () => {
  it('makes a token of the local principal that sees what the local principal saved', async () => {
    const saved = await runCli('save', '--task', 'Rotate nginx logs', '--content', 'logrotate with copytruncate', '--type', 'tool', '--json')
    expect(saved.code, saved.stderr).toBe(0)
    const id = (JSON.parse(saved.stdout) as { id: string }).id
    const created = await runCli('token', 'create', '--me', '--name', 'my browser', '--json')
    expect(created.code, created.stderr).toBe(0)
    const token = JSON.parse(created.stdout) as { token: string; name: string; principal: { user?: string; permissions: string[] } }
    expect(token.name).toBe('my browser')
    expect(token.principal.user).toBe('local')
    expect(token.principal.permissions).toEqual(expect.arrayContaining(['read', 'write', 'secrets:read', 'admin', 'hub:admin']))

    const hub = await openKnowHub({ dataDir: `${env.dir}/data`, embedder: { provider: 'hashed' } })
    try {
      const verified = await hub.tokens.verify(token.token)
      expect(verified?.principal.user).toBe('local')
      const found = await hub.knowledge.search({ q: 'nginx logrotate' }, verified!.principal)
      expect(found.results.map((r) => r.id)).toEqual([id])
    } finally {
      await hub.close()
    }
  }, 120_000)

  it('refuses ids or permissions beside --me', async () => {
    const mixed = await runCli('token', 'create', '--me', '--user', 'alice', '--perm', 'read')
    expect(mixed.code).not.toBe(0)
    expect(mixed.stderr).toContain('--me is a token with your own ids and permissions: leave out --user, --perm')
  })
})
