/**
 * The package as npm packs it installs and runs (issue 42): `npm pack` of this checkout, the
 * tarball installed into a fresh folder with a fresh HOME and no compiler on the PATH, then
 * `knowhub start` from that folder, the README's quick-start commands with the installed
 * `knowhub` (in place of `./knowhub`), `knowhub mcp` through the official MCP client, and the
 * dashboard and `/docs` as served from the installed files.
 *
 * Offline: npm resolves the tarball's dependencies from a lock file made from this repository's
 * (the versions `npm ci` put in this machine's npm cache) instead of asking the registry, and
 * installs with `npm ci --offline`. `npm pack --ignore-scripts` packs the dist/ this checkout
 * built (`npm run build`; `prepare` would only check that it is up to date).
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, describe, expect, it } from 'vitest'
import {
  checkOf,
  compilerAttempts,
  freePort,
  noCompilerBin,
  ONE_LINE_NOTE,
  PLACEHOLDER_ID,
  quickStartCommands,
  ROOT,
  startAsUser,
  type QuickStartState,
  type StartedServer,
} from '../helpers/readme.js'

const dirs: string[] = []
let server: StartedServer | undefined
afterAll(async () => {
  await server?.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

interface LockEntry {
  version?: string
  dev?: boolean
  [key: string]: unknown
}

/** A consumer's package.json and lock file that install `tarball` with the dependency versions of this repository's lock. */
function consumerProject(dir: string, tarball: string): void {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }
  const resolved = `file:${tarball}`
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', version: '1.0.0', dependencies: { knowhub: resolved } },
    'node_modules/knowhub': {
      version: pkg.version,
      resolved,
      integrity,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  }
  for (const [path, entry] of Object.entries(lock.packages)) if (path.startsWith('node_modules/') && !entry.dev) packages[path] = entry
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, dependencies: { knowhub: resolved } }))
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages }))
}

describe('the packed package', () => {
  it('installs without a compiler and runs: start, the README commands, mcp, the dashboard', async () => {
    const base = mkdtempSync(join(tmpdir(), 'knowhub-packed-'))
    dirs.push(base)
    const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', base], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 })
    expect(packed.status, packed.stderr).toBe(0)
    const { filename, files } = (JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!
    // What the package is made of: the built CLI, the dashboard, the template and its manifest, the migrations.
    const paths = new Set(files.map((f) => f.path))
    for (const path of [
      'bin/knowhub.js',
      'dist/bundle/knowhub.js',
      'dist/dashboard/app.js',
      'dist/store/pglite-template.json',
      'dist/store/pglite-template/PG_VERSION',
    ])
      expect(paths, path).toContain(path)

    const project = join(base, 'project')
    const home = join(base, 'home')
    mkdirSync(project)
    mkdirSync(home)
    consumerProject(project, join(base, filename))
    const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim()
    const port = await freePort()
    const env: NodeJS.ProcessEnv = {
      // The installed `knowhub` first, then stand-ins for every compiler, then the machine's node, npm and curl.
      PATH: `${join(project, 'node_modules', '.bin')}:${noCompilerBin(base)}:${process.env.PATH}`,
      HOME: home,
      npm_config_cache: cache,
      npm_config_update_notifier: 'false',
      KNOWHUB_PORT: String(port),
    }
    const install = spawnSync('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: project, env, encoding: 'utf8', timeout: 300_000 })
    expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0)
    expect(compilerAttempts(base)).toEqual([])
    expect(existsSync(join(home, '.cache', 'node-gyp'))).toBe(false)

    const version = spawnSync('knowhub', ['--version'], { cwd: project, env, encoding: 'utf8' })
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version)
    // A command that only reads, before anything exists, creates nothing (issue 42).
    const status = spawnSync('knowhub', ['status'], { cwd: project, env, encoding: 'utf8' })
    expect(status.stderr).toContain('No KnowHub data in .knowhub yet')
    expect(existsSync(join(project, '.knowhub'))).toBe(false)

    server = await startAsUser('knowhub start', project, env)
    const state: QuickStartState = { ids: [], myToken: '', aliceToken: '' }
    for (const written of quickStartCommands(readFileSync(join(ROOT, 'README.md'), 'utf8')).slice(3)) {
      const command = written
        .replaceAll('./knowhub', 'knowhub')
        .replaceAll('localhost:8420', `localhost:${port}`)
        .replaceAll(PLACEHOLDER_ID, state.ids[0] ?? PLACEHOLDER_ID)
      const result = spawnSync('bash', ['-c', command], { cwd: project, env, encoding: 'utf8', timeout: 120_000 })
      expect(result.status, `${command}\n${result.stderr}`).toBe(0)
      checkOf(written.replaceAll('localhost:8420', `localhost:${port}`))({ command, code: result.status, stdout: result.stdout, stderr: result.stderr }, state)
      if (command.startsWith('knowhub') && !/--help|--version/.test(command)) expect(result.stderr, command).toMatch(ONE_LINE_NOTE)
    }
    expect(state.ids).toHaveLength(2)

    // knowhub mcp beside the running server (it forwards there), through the official client.
    const transport = new StdioClientTransport({
      command: 'knowhub',
      args: ['mcp', '--no-packs'],
      cwd: project,
      env: env as Record<string, string>,
      stderr: 'pipe',
    })
    const client = new Client({ name: 'packed-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toContain('knowledge_search')
      const found = (await client.callTool({ name: 'knowledge_search', arguments: { query: 'selenium login blocked as a bot' } })) as {
        content: Array<{ text?: string }>
      }
      expect(found.content.map((c) => c.text ?? '').join('\n')).toContain(state.ids[0])
    } finally {
      await client.close()
    }

    // The dashboard and the API reference, from the installed package's files.
    const url = `http://127.0.0.1:${port}`
    const shell = await fetch(`${url}/`)
    expect(shell.status).toBe(200)
    const script = /src="([^"]+\.js[^"]*)"/.exec(await shell.text())?.[1]
    expect(script).toBeDefined()
    expect((await fetch(new URL(script!, url))).status).toBe(200)
    const docs = await fetch(`${url}/docs`)
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain('swagger')
    const signIn = await fetch(`${url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url },
      body: JSON.stringify({ token: state.myToken }),
    })
    expect(signIn.status, await signIn.clone().text()).toBe(200)
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!
    const mine = (await (await fetch(`${url}/ui/knowledge/search?q=selenium`, { headers: { cookie } })).json()) as { results: Array<{ id: string }> }
    expect(mine.results.map((r) => r.id)).toContain(state.ids[0])
    // Its data folder is where it was started, and nothing else appeared there.
    expect(readdirSync(project).sort()).toEqual(['.knowhub', 'backup.jsonl', 'node_modules', 'package-lock.json', 'package.json'])
  }, 600_000)
})
