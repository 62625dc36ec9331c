/**
 * One-shot commands beside a running server: run on the server that holds the data folder
 * (found through its lock file, said in one line on stderr), on the one `--url` names, or
 * refused at once when the folder is held by a process that serves nothing, or when the
 * command needs the database itself.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../src/server/serve.js'
import { runCli } from '../helpers/cli.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')
let t: TestHub
let server: RunningServer
let dir: string
const saved = { ...process.env }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-beside-'))
  mkdirSync(join(dir, 'agents', 'deployer'), { recursive: true })
  writeFileSync(join(dir, 'agents', 'deployer', 'knowledge.md'), '## @deploy: ship a release\nContract: run the checks first.\n')
  t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 }, agent: { home: join(dir, 'agents') } })
  server = await t.start()
  delete process.env.DATABASE_URL
  delete process.env.KNOWHUB_URL
  delete process.env.KNOWHUB_TOKEN
  process.env.KNOWHUB_EMBEDDER = 'hashed'
  process.env.KNOWHUB_EMBED_DIM = '64'
})
afterAll(async () => {
  process.env = saved
  await t?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the CLI beside a running server', () => {
  it('runs on the server holding the data folder, saying so once on stderr', async () => {
    if (t.hub.config.databaseUrl) return // the lock exists on the embedded database only: this file runs once, on PGlite
    process.env.KNOWHUB_DATA_DIR = t.dataDir
    const save = await runCli('save', '--task', 'Deploy with pnpm in Docker', '--content', 'corepack enable first', '--type', 'tool', '--json')
    expect(save.code, save.stderr).toBe(0)
    expect(save.stderr.split('\n')).toEqual([
      `knowhub: the KnowHub server at ${server.url} (process ${process.pid}) holds ${t.dataDir}: running this command there`,
    ])
    const id = (JSON.parse(save.stdout) as { id: string }).id
    // The server saw it: it is in its store.
    expect((await t.hub.knowledge.get(id, t.hub.config.principal)).task).toBe('Deploy with pnpm in Docker')
    // knowhub edit runs there too (the API's PATCH), keeping the previous version.
    const edit = await runCli('edit', id, '--content', 'corepack enable, then pnpm install --frozen-lockfile', '--tag', 'tool=pnpm', '--json')
    expect(edit.code, edit.stderr).toBe(0)
    expect(await t.hub.knowledge.get(id, t.hub.config.principal)).toMatchObject({
      content: 'corepack enable, then pnpm install --frozen-lockfile',
      tags: { tool: 'pnpm' },
      version: 2,
    })
    const status = await runCli('status', '--json')
    expect(JSON.parse(status.stdout)).toMatchObject({ entries: 1, principal: { user: 'local' } })
    const created = await runCli('token', 'create', '--user', 'alice', '--org', 'acme')
    expect(created.stdout).toMatch(/^kh_/)
    // The CLI beside the server (its local key) is the hub operator: it alone mints hub:admin,
    // and the operator token it made cannot mint another over HTTP (issue 27).
    const operator = await runCli('token', 'create', '--user', 'ops', '--hub-admin', '--json')
    expect(operator.code, operator.stderr).toBe(0)
    const opsToken = (JSON.parse(operator.stdout) as { token: string }).token
    const again = await fetch(`${server.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opsToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'ops2', permissions: ['hub:admin'] }),
    })
    expect(again.status).toBe(403)
    // Token mode now: the lock file's key still acts as the local principal.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    expect((await runCli('list', '--json')).stdout).toContain(id)

    const reindex = await runCli('reindex')
    expect(reindex.code).toBe(1)
    expect(reindex.stderr).toContain(`held by the KnowHub server at ${server.url}`)
  })

  it('resource save | get | list | update | delete run on the server holding the folder (secrets encrypted there)', async () => {
    if (t.hub.config.databaseUrl) return
    process.env.KNOWHUB_DATA_DIR = t.dataDir
    const note = `knowhub: the KnowHub server at ${server.url} (process ${process.pid}) holds ${t.dataDir}: running this command there`
    const secretFile = join(dir, 'cookie.txt')
    writeFileSync(secretFile, 'session_id=beside-4411')
    const save = await runCli('resource', 'save', 'cookies/site_a', '--title', 'Site A cookie', '--type', 'cookie', '--secret-file', secretFile)
    expect(save.code, save.stderr).toBe(0)
    expect(save.stdout).toBe('saved cookies/site_a (owner user:local, v1) (secret encrypted)')
    expect(save.stderr.split('\n')).toEqual([note])
    // The server holds it, encrypted with the data folder's key.
    expect(await t.hub.resources.get('cookies/site_a', t.hub.config.principal, { includeSecret: true })).toMatchObject({
      secure_body: 'session_id=beside-4411',
    })

    const again = await runCli('resource', 'save', 'cookies/site_a', '--title', 'Site A cookie (renewed)', '--type', 'cookie')
    expect(again.stdout).toBe('updated cookies/site_a (owner user:local, v2) (secret encrypted)')
    const shown = await runCli('resource', 'get', 'cookies/site_a', '--show-secret')
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('title:   Site A cookie (renewed)')
    expect(shown.stdout).toContain('--- secure_body ---\nsession_id=beside-4411')
    const listed = await runCli('resource', 'list', '--type', 'cookie', '--json')
    expect((JSON.parse(listed.stdout) as { items: { id: string }[] }).items.map((r) => r.id)).toEqual(['cookies/site_a'])
    const updated = await runCli('resource', 'update', 'cookies/site_a', '--of', 'user:local', '--title', 'Site A cookie (v3)')
    expect(updated.stdout).toBe('updated cookies/site_a (v3)')
    const missing = await runCli('resource', 'get', 'cookies/site_b', '--json')
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'not_found' } })
    const deleted = await runCli('resource', 'delete', 'cookies/site_a')
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toBe('deleted cookies/site_a (owner user:local)')
    expect((await t.hub.resources.list({}, t.hub.config.principal)).items).toEqual([])
  })

  it('agent context reads the agent folder on this machine and gets knowledge from the server; agent index needs no database', async () => {
    if (t.hub.config.databaseUrl) return
    process.env.KNOWHUB_DATA_DIR = t.dataDir
    // The server's agent home (its config) holds a deployer too: it must not be what the CLI reads.
    process.env.KNOWHUB_AGENT_HOME = join(dir, 'my-agents')
    mkdirSync(join(dir, 'my-agents', 'deployer'), { recursive: true })
    writeFileSync(join(dir, 'my-agents', 'deployer', 'knowledge.md'), '## @ship: ship from my laptop\nContract: tag first.\n')
    try {
      const context = await runCli('agent', 'context', 'deployer', '--task', 'Deploy with pnpm in Docker', '--budget', '4000', '--json')
      expect(context.code, context.stderr).toBe(0)
      expect(context.stderr).toContain(`knowhub: the KnowHub server at ${server.url}`)
      expect(context.stderr).toContain('reading the agent folder "deployer" here, on this machine; knowledge and packs come from that server')
      const assembled = JSON.parse(context.stdout) as { messages: { content: string }[]; report: { budget: number; source: string } }
      expect(assembled.report).toMatchObject({ budget: 4000, source: 'folder' })
      const text = assembled.messages.map((m) => m.content).join('\n')
      expect(text).toContain('@ship')
      expect(text).not.toContain('@deploy')
      // Knowledge came from the server's store: the entry saved there earlier in this file.
      expect(text).toContain('corepack enable')
      const local = await runCli('agent', 'context', 'deployer', '--home', join(dir, 'agents'), '--json')
      expect(local.code, local.stderr).toBe(0)
      expect(local.stdout).toContain('@deploy')
    } finally {
      delete process.env.KNOWHUB_AGENT_HOME
    }

    const index = await runCli('agent', 'index', 'deployer', '--home', join(dir, 'agents'))
    expect(index.code, index.stderr).toBe(0)
    expect(index.stderr).toBe('')
    expect(index.stdout).toContain('functions')
    expect(index.stdout).toContain('@deploy')
  })

  it('talks to the server over node:http: a one-shot command never loads undici (fetch costs ~80 ms to load)', async () => {
    if (t.hub.config.databaseUrl) return
    const probe =
      'data:text/javascript,process.on("exit",()=>process.stderr.write("undici loaded: "+process.moduleLoadList.some((m)=>m.includes("undici"))+"\\n"))'
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', probe, join(ROOT, 'test', 'mcp', 'run-cli.ts'), 'status', '--json'], {
      cwd: ROOT,
      env: { ...process.env, KNOWHUB_DATA_DIR: t.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    expect(code, stderr).toBe(0)
    expect(stderr).toContain(`knowhub: the KnowHub server at ${server.url}`)
    expect(JSON.parse(stdout)).toHaveProperty('entries')
    expect(stderr).toContain('undici loaded: false')
  })

  it('runs on the server --url names, with --token', async () => {
    process.env.KNOWHUB_DATA_DIR = join(dir, 'unused')
    const key = t.hub.config.databaseUrl
      ? undefined
      : (JSON.parse((await import('node:fs')).readFileSync(join(t.dataDir, 'db.lock'), 'utf8')) as { key: string }).key
    const args = ['--url', server.url, ...(key ? ['--token', key] : [])]
    const search = await runCli('search', 'pnpm docker', ...args, '--json')
    expect(search.code, search.stderr).toBe(0)
    expect(JSON.parse(search.stdout)).toHaveProperty('results')
    const unreachable = await runCli('list', '--url', 'http://127.0.0.1:9', '--json')
    expect(unreachable.code).toBe(1)
    expect(JSON.parse(unreachable.stdout)).toMatchObject({ error: { code: 'internal_error', details: { client_code: 'network_error' } } })
  })

  it('refuses at once a folder held by a process that serves nothing, naming it', async () => {
    const data = join(dir, 'held')
    mkdirSync(data, { recursive: true })
    writeFileSync(join(data, 'db.lock'), JSON.stringify({ pid: process.pid, host: hostname(), started_at: '2026-11-23T00:00:00Z' }))
    process.env.KNOWHUB_DATA_DIR = data
    const started = Date.now()
    const list = await runCli('list')
    expect(list.code).toBe(1)
    expect(list.stderr).toContain(`error [database_error]: The embedded database in ${data} is in use by process ${process.pid}`)
    expect(list.stderr).toContain('--url, KNOWHUB_URL')
    expect(Date.now() - started).toBeLessThan(5000)
  })
})
