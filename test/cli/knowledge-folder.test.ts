/**
 * The knowledge folder on disk and over HTTP (docs/knowledge-folder.md): the worked example
 * (export, edit a preference by hand, import, `show --versions`), what reading a folder refuses
 * (a symbolic link out of it, a huge file) and accepts (a BOM, Windows line endings), secrets
 * never written, and the same through a running server: the CLI with --url, the zip the
 * dashboard's button downloads, and the client's methods.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { unzipSync, strFromU8 } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/client.js'
import { runCli, useCliEnv } from '../helpers/cli.js'
import { openDashboardHub, type DashboardHub } from '../dashboard/helpers.js'

const env = useCliEnv('folder', { KNOWHUB_USER: 'dev', KNOWHUB_ORG: 'acme', KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_EMBED_DIM: '64', KNOWHUB_TOKEN: undefined })

/** Every file under `dir` (hidden ones too), relative, with its text. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out[relative(dir, p)] = readFileSync(p, 'utf8')
    }
  }
  walk(dir)
  return out
}

async function ok(...args: string[]): Promise<string> {
  const run = await runCli(...args)
  expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0)
  return run.stdout
}

describe('knowhub export --layout folder, import DIR, sync DIR (in this process)', () => {
  it('the worked example: export, edit a preference by hand, import, the new version in show --versions; the next export changes only that file', async () => {
    const saved = JSON.parse(
      await ok(
        'save',
        '--task',
        '代码风格偏好',
        '--content',
        '偏好 TypeScript,注重类型安全',
        '--type',
        'user_profile',
        '--tag',
        'category=preference',
        '--json',
      ),
    ) as { id: string }
    await ok('save', '--task', 'Deploy with pnpm', '--content', 'corepack enable first', '--type', 'tool', '--scope', 'org:acme')
    const dir = join(env.dir, 'knowledge')
    await ok('export', '--layout', 'folder', dir)
    const before = tree(dir)
    expect(Object.keys(before).sort()).toEqual(['README.md', 'global/tools.json', 'users/user_dev/preferences.json'])
    // Exported twice: byte-identical.
    await ok('export', '--layout', 'folder', dir)
    expect(tree(dir)).toEqual(before)

    const prefs = join(dir, 'users/user_dev/preferences.json')
    writeFileSync(prefs, readFileSync(prefs, 'utf8').replace('注重类型安全', '注重类型安全,开启 strict'))
    const plan = await ok('import', dir, '--dry-run')
    expect(plan).toContain(`change ${saved.id}  users/user_dev/preferences.json`)
    expect(plan).toContain('plan (dry run, nothing written): added 0, changed 1, unchanged 1')
    const done = await ok('import', dir)
    expect(done).toContain('imported: added 0, changed 1, unchanged 1')
    const shown = await ok('show', saved.id, '--versions')
    expect(shown).toContain('偏好 TypeScript,注重类型安全,开启 strict')
    expect(shown).toContain('replaced: edited in users/user_dev/preferences.json')

    await ok('export', '--layout', 'folder', dir)
    const after = tree(dir)
    expect(after['global/tools.json']).toBe(before['global/tools.json'])
    expect(after['users/user_dev/preferences.json']).not.toBe(before['users/user_dev/preferences.json'])
  })

  it('refuses a symbolic link out of the folder and a huge file, naming the file; accepts a BOM and Windows line endings', async () => {
    const dir = join(env.dir, 'bad')
    mkdirSync(join(dir, 'users/user_dev'), { recursive: true })
    mkdirSync(join(dir, 'global'), { recursive: true })
    const outside = join(env.dir, 'outside.json')
    writeFileSync(outside, JSON.stringify([{ task: 'outside', content: 'should never be read' }]))
    symlinkSync(outside, join(dir, 'global/tools.json'))
    const count = async () => (JSON.parse(await ok('status', '--json')) as { entries: number }).entries
    const entries = await count()
    const link = await runCli('import', dir)
    expect(link.code).toBe(1)
    expect(link.stderr).toContain(`error [forbidden]: global/tools.json is a symbolic link to ${outside}, outside ${dir}: refused`)

    unlinkSync(join(dir, 'global/tools.json'))
    writeFileSync(join(dir, 'users/user_dev/habits.json'), '')
    truncateSync(join(dir, 'users/user_dev/habits.json'), 65 * 1024 * 1024) // sparse: nothing is written to disk
    const huge = await runCli('import', dir)
    expect(huge.code).toBe(1)
    expect(huge.stderr).toContain(`error [too_large]: users/user_dev/habits.json is ${65 * 1024 * 1024} bytes; a knowledge file is at most ${64 * 1024 * 1024}`)
    expect(await count()).toBe(entries)

    const text = `\uFEFF${JSON.stringify([{ task: 'CRLF', content: 'a file saved on Windows' }], null, 2).replaceAll('\n', '\r\n')}\r\n`
    writeFileSync(join(dir, 'users/user_dev/habits.json'), text)
    expect(await ok('import', dir)).toContain('imported: added 1')
    expect(await count()).toBe(entries + 1)
  })

  it('a bad file names the file, the index and the field and imports nothing (exit 1); --partial imports the rest', async () => {
    const dir = join(env.dir, 'partial')
    mkdirSync(join(dir, 'users/user_dev'), { recursive: true })
    writeFileSync(
      join(dir, 'users/user_dev/habits.json'),
      JSON.stringify([
        { task: 'ok', content: 'fine' },
        { task: 'bad', content: 'x', score: 9 },
      ]),
    )
    const run = await runCli('import', dir)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('users/user_dev/habits.json[1] score: [invalid_import] score is 1-5')
    expect(run.stdout).toContain('nothing imported: added 1, changed 0')
    const partial = await runCli('import', dir, '--partial', '--json')
    expect(JSON.parse(partial.stdout)).toMatchObject({ applied: true, added: [{ file: 'users/user_dev/habits.json' }], errors: [{ index: 1, field: 'score' }] })
  })

  it('export refuses a folder that is not a knowledge folder, and deletes the files an entry left', async () => {
    const other = join(env.dir, 'not-knowledge')
    mkdirSync(other)
    writeFileSync(join(other, 'notes.txt'), 'mine')
    const run = await runCli('export', '--layout', 'folder', other)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('is not empty and is not a knowledge folder')
    expect(readdirSync(other)).toEqual(['notes.txt'])

    const dir = join(env.dir, 'moves')
    const saved = JSON.parse(
      await ok('save', '--task', 'moving', '--content', 'from habits to constraints', '--type', 'user_profile', '--tag', 'category=habit', '--json'),
    ) as {
      id: string
    }
    await ok('export', '--layout', 'folder', dir)
    expect(readFileSync(join(dir, 'users/user_dev/habits.json'), 'utf8')).toContain(saved.id)
    await ok('edit', saved.id, '--tag', 'category=constraint')
    await ok('export', '--layout', 'folder', dir)
    expect(readFileSync(join(dir, 'users/user_dev/constraints.json'), 'utf8')).toContain(saved.id)
    expect(readFileSync(join(dir, 'users/user_dev/habits.json'), 'utf8')).not.toContain(saved.id)
  })

  it('sync: both ways, a state file, a conflict note that keeps both versions', async () => {
    const dir = join(env.dir, 'synced')
    const saved = JSON.parse(await ok('save', '--task', 'sync me', '--content', 'v1', '--type', 'plan', '--scope', 'org:acme', '--json')) as { id: string }
    expect(await ok('sync', dir)).toMatch(/^synced: to the store: added 0, changed 0/)
    const state = JSON.parse(readFileSync(join(dir, '.knowhub-sync.json'), 'utf8')) as { entries: Record<string, { version: number }> }
    expect(state.entries[saved.id]).toMatchObject({ version: 1 })
    const plans = join(dir, 'global/plans.json')
    writeFileSync(plans, readFileSync(plans, 'utf8').replace('"v1"', '"folder v2"'))
    await ok('edit', saved.id, '--content', 'store v2')
    const run = await runCli('sync', dir)
    expect(run.code).toBe(0)
    expect(run.stderr).toContain(`conflict: ${saved.id} changed in global/plans.json and in the store: both kept, see conflicts/${saved.id}.json`)
    expect(readFileSync(plans, 'utf8')).toContain('"folder v2"')
    expect(readFileSync(join(dir, `conflicts/${saved.id}.json`), 'utf8')).toContain('"store v2"')
    expect(JSON.parse(await ok('show', saved.id, '--json')).content).toBe('store v2')
  })

  it('never writes a secret: entries name resources by id only', async () => {
    const secretFile = join(env.dir, 'cookie.txt')
    writeFileSync(secretFile, 'session_id=folder-secret-7731')
    await ok('resource', 'save', 'cookies/site_a', '--title', 'Site A cookie', '--type', 'cookie', '--secret-file', secretFile)
    await ok('save', '--task', 'Log in to site A', '--content', 'use the stored cookie', '--type', 'tool', '--resource', 'cookies/site_a')
    const dir = join(env.dir, 'secrets')
    await ok('export', '--layout', 'folder', dir)
    const all = Object.values(tree(dir)).join('\n')
    expect(all).toContain('"cookies/site_a"')
    expect(all).not.toContain('folder-secret-7731')
  })
})

describe('the knowledge folder through a running server', () => {
  let t: DashboardHub
  let token: string
  const saved = { ...process.env }
  beforeAll(async () => {
    t = await openDashboardHub({ config: { embedder: { provider: 'hashed', dimension: 64 } } })
    token = (await t.hub.tokens.create({ user: 'ann', org: 'acme', permissions: ['read', 'write'] })).token
  })
  afterAll(async () => {
    process.env = saved
    await t?.close()
  })

  it('export, import and sync with --url; the zip (the dashboard`s download) holds the same files; the client`s methods', async () => {
    const url = t.server.url
    const created = JSON.parse(
      await ok(
        'save',
        '--server',
        url,
        '--token',
        token,
        '--task',
        '偏好',
        '--content',
        '中文内容',
        '--type',
        'user_profile',
        '--tag',
        'category=preference',
        '--json',
      ),
    ) as { id: string }
    const dir = join(env.dir, 'remote')
    await ok('export', '--layout', 'folder', dir, '--url', url, '--token', token)
    const files = tree(dir)
    expect(Object.keys(files).sort()).toEqual(['README.md', 'users/user_ann/preferences.json'])

    // The client: the same files as JSON, and as a zip.
    const client = createClient({ baseUrl: url, token })
    const exported = await client.folder.export()
    expect(Object.fromEntries(exported.files.map((f) => [f.path, f.text]))).toEqual(files)
    const zip = unzipSync(await client.folder.exportZip())
    expect(Object.fromEntries(Object.entries(zip).map(([p, b]) => [p, strFromU8(b)]))).toEqual(files)
    // The same zip, byte for byte, on the next call (fixed dates, sorted paths).
    expect(await client.folder.exportZip()).toEqual(await client.folder.exportZip())

    // Edit by hand, import over HTTP: a new version on the server.
    const prefs = join(dir, 'users/user_ann/preferences.json')
    writeFileSync(prefs, readFileSync(prefs, 'utf8').replace('中文内容', '改过的中文内容'))
    expect(await ok('import', dir, '--url', url, '--token', token)).toContain('imported: added 0, changed 1')
    const principal = { user: 'ann', org: 'acme', permissions: ['read', 'write'] as ('read' | 'write')[] }
    expect(await t.hub.knowledge.get(created.id, principal)).toMatchObject({ content: '改过的中文内容', version: 2 })
    const plan = await client.folder.import([{ path: 'users/user_ann/habits.json', text: '[{"task":"t","content":"c"}]' }], { dry_run: true })
    expect(plan).toMatchObject({ dry_run: true, applied: false, added: [{ file: 'users/user_ann/habits.json' }] })
    // Another user's section is refused over HTTP as it is here.
    const refused = await client.folder.import([{ path: 'users/user_zed/habits.json', text: '[{"task":"t","content":"c"}]' }])
    expect(refused.errors).toEqual([expect.objectContaining({ file: 'users/user_zed/habits.json', index: 0, field: 'scopes', code: 'forbidden' })])

    // Sync through the server.
    expect(await ok('sync', dir, '--url', url, '--token', token)).toMatch(/^synced:/)
    expect(existsSync(join(dir, '.knowhub-sync.json'))).toBe(true)

    // The dashboard's download: the same zip at /ui/knowledge/folder for the signed-in token.
    const login = await fetch(`${url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url },
      body: JSON.stringify({ token }),
    })
    const cookie = login.headers.get('set-cookie')?.split(';')[0] ?? ''
    const download = await fetch(`${url}/ui/knowledge/folder`, { headers: { cookie } })
    expect(download.status).toBe(200)
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="knowledge-folder.zip"')
    const unzipped = unzipSync(new Uint8Array(await download.arrayBuffer()))
    expect(strFromU8(unzipped['users/user_ann/preferences.json']!)).toContain('改过的中文内容')
  })

  it('sync --watch keeps a folder in sync through the running server: a hand edit reaches the store, a store edit the folder', async () => {
    const principal = { user: 'wes', org: 'acme', permissions: ['read', 'write'] as ('read' | 'write')[] }
    const wes = (await t.hub.tokens.create(principal)).token
    const entry = await t.hub.knowledge.save({ task: 'watched', content: 'first', types: ['tool'] }, principal)
    const dir = join(env.dir, 'watched')
    const root = fileURLToPath(new URL('../../', import.meta.url))
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/mcp/run-cli.ts', 'sync', dir, '--watch', '--interval', '1', '--url', t.server.url, '--token', wes],
      { cwd: root, env: { ...process.env, KNOWHUB_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    const until = async (what: string, check: () => boolean | Promise<boolean>) => {
      for (let waited = 0; waited < 90_000; waited += 250) {
        if (await check()) return
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      throw new Error(`timed out waiting for ${what}; the watcher said: ${output}`)
    }
    try {
      const tools = join(dir, 'users/user_wes/tools.json')
      await until('the first sync', () => existsSync(join(dir, '.knowhub-sync.json')) && existsSync(tools))
      await until('the watcher', () => output.includes(`watching ${dir}`))
      writeFileSync(tools, readFileSync(tools, 'utf8').replace('"first"', '"edited in the folder"'))
      await until('the folder edit in the store', async () => (await t.hub.knowledge.get(entry.id, principal)).content === 'edited in the folder')
      expect(await t.hub.knowledge.versions(entry.id, principal)).toEqual([
        expect.objectContaining({ content: 'first', reason: 'edited in users/user_wes/tools.json' }),
      ])
      await t.hub.knowledge.edit(entry.id, { content: 'edited in the store' }, principal)
      await until('the store edit in the folder', () => readFileSync(tools, 'utf8').includes('"edited in the store"'))
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
  }, 180_000)
})
