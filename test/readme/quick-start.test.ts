/**
 * The README's quick start, run as written: its shell blocks are parsed from README.md, the
 * server is started with the real `npm start` in a fresh checkout folder (its embedded database
 * in ./.knowhub), and every other command runs in order while it serves — the CLI as the README
 * types it (`./knowhub …`), the HTTP examples through curl. No shim: the machine's own npm, a
 * fresh npm cache and HOME. The checkout folder holds a link to each top-level entry of this
 * repository (package.json, bin/, dist/, node_modules/, the `knowhub` launcher…), so what the
 * commands write (./.knowhub, backup.jsonl) stays in a temp folder. The only edits are the port
 * (a free one instead of 8420, through KNOWHUB_PORT and in the curl lines) and the placeholder
 * `<ENTRY_ID>` (the id the first `save` printed). A command the test has no expectation for
 * fails it: when the README changes, this test changes with it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The README's placeholder for an entry id, replaced by the id the first `save` printed. */
const PLACEHOLDER_ID = '<ENTRY_ID>'

/**
 * The shell commands of the README's "Quick start" section, in order: continuation lines
 * joined, trailing comments dropped.
 */
function quickStartCommands(readme: string): string[] {
  const start = readme.indexOf('## Quick start')
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end < 0 ? undefined : end)
  const commands: string[] = []
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const joined = block[1]!.replace(/\\\n\s*/g, '')
    for (const line of joined.split('\n')) {
      const command = line.replace(/\s+#\s.*$/, '').trim()
      if (command !== '' && !command.startsWith('#')) commands.push(command)
    }
  }
  return commands
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** A checkout as a user has it: a link to each top-level entry of this repository but its data, git and test folders. */
function linkCheckout(dir: string): void {
  const skip = new Set(['.git', '.knowhub', '.test-tmp', 'coverage', 'bench'])
  for (const name of readdirSync(ROOT)) if (!skip.has(name)) symlinkSync(join(ROOT, name), join(dir, name))
}

interface Ran {
  command: string
  code: number | null
  stdout: string
  stderr: string
}

/** What each README command must answer; `ids` holds the ids the saves printed. */
type Check = (ran: Ran, ids: string[]) => void
/** What `token create` printed (the token the README's TypeScript example reads from KNOWHUB_TOKEN). */
let tokenCreated = ''
const ONE_LINE_NOTE = /^knowhub: the KnowHub server at http:\/\/127\.0\.0\.1:\d+ \(process \d+\) holds \.knowhub: running this command there$/m

const CHECKS: Array<[RegExp, Check]> = [
  [
    /^\.\/knowhub save /,
    (ran, ids) => {
      const id = /^saved (knowledge-\S+)$/m.exec(ran.stdout)?.[1]
      expect(id, ran.stdout).toBeDefined()
      ids.push(id!)
    },
  ],
  [/^\.\/knowhub search "selenium/, (ran, ids) => expect(ran.stdout).toContain(ids[0])],
  [/^\.\/knowhub list --types tool$/, (ran, ids) => expect(ran.stdout).toContain(ids[0])],
  [/^\.\/knowhub edit \S+ --tag site=a /, (ran, ids) => expect(ran.stdout).toBe(`edited ${ids[0]} (now v2)\n`)],
  [/^\.\/knowhub show \S+ --versions$/, (ran, ids) => expect(ran.stdout).toContain(`${ids[0]}  [tool, strategy]`)],
  [/^\.\/knowhub feedback /, (ran) => expect(ran.stdout).toContain('helpful 1')],
  [
    /^\.\/knowhub export -o backup\.jsonl && \.\/knowhub import backup\.jsonl --on-conflict skip$/,
    (ran) => expect(ran.stdout).toContain('imported 0, skipped 1'),
  ],
  [/^\.\/knowhub status$/, (ran) => expect(ran.stdout).toMatch(/^entries: +1$/m)],
  [/^\.\/knowhub --help$/, (ran) => expect(ran.stdout).toContain('Usage: knowhub')],
  [/^\.\/knowhub --version$/, (ran) => expect(ran.stdout).toMatch(/^\d+\.\d+\.\d+\n$/)],
  [/^curl -s localhost:\d+\/healthz$/, (ran) => expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'ok' })],
  [/^curl -s -X POST localhost:\d+\/api\/knowledge /, (ran) => expect(JSON.parse(ran.stdout)).toMatchObject({ task: 'Deploy with pnpm in Docker' })],
  [
    /^curl -s 'localhost:\d+\/api\/knowledge\/search\?q=pnpm/,
    (ran) => expect((JSON.parse(ran.stdout) as { results: Array<{ task: string }> }).results.map((r) => r.task)).toContain('Deploy with pnpm in Docker'),
  ],
  [
    /^\.\/knowhub token create /,
    (ran) => {
      expect(ran.stdout).toMatch(/^kh_\S+$/m)
      tokenCreated = ran.stdout
    },
  ],
  [
    /^\.\/knowhub reown --from local --to alice --scope org:acme --dry-run$/,
    (ran, ids) => {
      expect(ran.stdout).toMatch(/^user:local owns 2 entries: would change 2 \(to user:alice, shared with org:acme\); dry run, nothing changed$/m)
      expect(ran.stdout).toContain(`  ${ids[0]}`)
    },
  ],
  [/^\.\/knowhub search "用户/, (ran, ids) => expect(ran.stdout).toContain(ids[1])],
]

const dirs: string[] = []
let server: ChildProcess | undefined
afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve))
    process.kill(-server.pid!, 'SIGTERM')
    await exited
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Starts `npm start` in `cwd` and resolves once it prints its URL. */
function startServer(cwd: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: string[] }> {
  // Its own process group, so that the stop reaches npm's child too (killing npm alone leaves node serving).
  const child = spawn('bash', ['-c', 'npm start'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const output: string[] = []
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output.push(chunk)
      if (output.join('').includes('KnowHub listening on')) resolve({ child, output })
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk))
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}) before listening:\n${output.join('')}`)))
  })
}

describe('README quick start', () => {
  it('runs as written: npm start, then every CLI and curl example in order', async () => {
    const commands = quickStartCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'))
    expect(commands.slice(0, 3)).toEqual(['npm install', 'npm start', 'npm test'])

    const base = mkdtempSync(join(tmpdir(), 'knowhub-readme-'))
    dirs.push(base)
    const dir = join(base, 'knowhub')
    mkdirSync(dir)
    linkCheckout(dir)
    mkdirSync(join(base, 'npm-cache'))
    const port = await freePort()
    // The machine's own PATH (its npm, node and curl), a fresh HOME and npm cache, the free port.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: base, npm_config_cache: join(base, 'npm-cache'), KNOWHUB_PORT: String(port) }
    const started = await startServer(dir, env)
    server = started.child

    const ids: string[] = []
    // Placeholders are marked as such (`<ENTRY_ID>`), never an id that looks real.
    expect(commands.filter((c) => /knowledge-\d{14}-/.test(c))).toEqual([])
    expect(commands.filter((c) => c.includes(PLACEHOLDER_ID)).length).toBeGreaterThan(0)
    for (const written of commands.slice(3)) {
      const command = written.replaceAll('localhost:8420', `localhost:${port}`).replaceAll(PLACEHOLDER_ID, ids[0] ?? PLACEHOLDER_ID)
      const result = spawnSync('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 })
      const ran: Ran = { command, code: result.status, stdout: result.stdout, stderr: result.stderr }
      expect(ran.code, `${command}\n${ran.stderr}`).toBe(0)
      const check = CHECKS.find(([pattern]) => pattern.test(command))
      expect(check, `no expectation for the README command: ${command}`).toBeDefined()
      check![1](ran, ids)
      // Each command that needs the data says, in one line, that it runs on the server.
      if (command.startsWith('./knowhub') && !/--help|--version/.test(command)) expect(ran.stderr, command).toMatch(ONE_LINE_NOTE)
    }
    expect(ids).toHaveLength(2)

    // The README's TypeScript example, as written, against the same server (now in token mode:
    // the token the quick start created is the reader's KNOWHUB_TOKEN); `knowhub/client` resolves
    // to this package as it does inside a checkout.
    const token = /^kh_\S+$/m.exec(tokenCreated)?.[0]
    expect(token).toBeDefined()
    const examples = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
    expect(examples.length).toBeGreaterThan(0)
    for (const [i, example] of examples.entries()) {
      const file = join(dir, `readme-example-${i}.mts`)
      writeFileSync(file, example.replaceAll('127.0.0.1:8420', `127.0.0.1:${port}`))
      const result = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), [file], {
        cwd: dir,
        env: { ...env, KNOWHUB_TOKEN: token },
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(result.status, `${example}\n${result.stderr}`).toBe(0)
    }
    // What it saved is there for its token's principal.
    const found = await fetch(`http://127.0.0.1:${port}/api/knowledge/search?q=undetected_chromedriver`, { headers: { authorization: `Bearer ${token}` } })
    expect(await found.text()).toContain('Use undetected_chromedriver')
  }, 600_000)
})
