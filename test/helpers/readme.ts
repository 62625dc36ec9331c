/**
 * The README's quick start as data, for the tests that run it: in a checkout
 * (test/readme/quick-start.test.ts) and from the packed package (test/package/packed.test.ts).
 * Its shell commands parsed from README.md, what each must answer, a free port, a PATH on which
 * every compiler fails loudly, and the server started and stopped as a user does.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The README's placeholder for an entry id, replaced by the id the first `save` printed. */
export const PLACEHOLDER_ID = '<ENTRY_ID>'

/**
 * The shell commands of the README's "Quick start" section, in order: continuation lines
 * joined, trailing comments dropped.
 */
export function quickStartCommands(readme: string): string[] {
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

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Compilers and build tools a native module's install would call (node-gyp: make and a C++ compiler). */
const COMPILERS = ['cc', 'gcc', 'c++', 'g++', 'clang', 'clang++', 'make', 'gmake', 'cmake']

/**
 * A folder of stand-ins for every compiler, first on `PATH`: each records its call in
 * `attempts.log` and fails, so an install that needs a compiler fails and says so.
 * @example
 * const bin = noCompilerBin(dir); env.PATH = `${bin}:${process.env.PATH}`
 */
export function noCompilerBin(dir: string): string {
  const bin = join(dir, 'no-compiler')
  mkdirSync(bin, { recursive: true })
  for (const name of COMPILERS) {
    const file = join(bin, name)
    writeFileSync(
      file,
      `#!/bin/sh\necho "${name} $*" >> '${join(dir, 'compiler-attempts.log')}'\necho "${name}: no compiler on this machine (test)" >&2\nexit 127\n`,
    )
    chmodSync(file, 0o755)
  }
  return bin
}

/** The calls `dir`'s compiler stand-ins recorded (none: nothing tried to compile). */
export function compilerAttempts(dir: string): string[] {
  return readdirSync(dir).includes('compiler-attempts.log') ? readFileSync(join(dir, 'compiler-attempts.log'), 'utf8').trim().split('\n') : []
}

export interface Ran {
  command: string
  code: number | null
  stdout: string
  stderr: string
}

/** What the quick start's run keeps: the ids the saves printed and the tokens `token create` printed. */
export interface QuickStartState {
  ids: string[]
  /** The token of `token create --me` (the reader's own: the dashboard signs in with it). */
  myToken: string
  /** Alice's token (the README's TypeScript example reads it from KNOWHUB_TOKEN). */
  aliceToken: string
}

type Check = (ran: Ran, state: QuickStartState) => void
const token = (ran: Ran): string => {
  const found = /^kh_\S+$/m.exec(ran.stdout)?.[0]
  expect(found, ran.stdout + ran.stderr).toBeDefined()
  return found!
}

/** What each README command (as written, `./knowhub …`) must answer. A command with none fails the test. */
export const QUICK_START_CHECKS: Array<[RegExp, Check]> = [
  [
    /^\.\/knowhub save /,
    (ran, state) => {
      const id = /^saved (knowledge-\S+)$/m.exec(ran.stdout)?.[1]
      expect(id, ran.stdout).toBeDefined()
      state.ids.push(id!)
    },
  ],
  [/^\.\/knowhub search "selenium/, (ran, { ids }) => expect(ran.stdout).toContain(ids[0])],
  [/^\.\/knowhub list --types tool$/, (ran, { ids }) => expect(ran.stdout).toContain(ids[0])],
  [/^\.\/knowhub edit \S+ --tag site=a /, (ran, { ids }) => expect(ran.stdout).toBe(`edited ${ids[0]} (now v2)\n`)],
  [/^\.\/knowhub show \S+ --versions$/, (ran, { ids }) => expect(ran.stdout).toContain(`${ids[0]}  [tool, strategy]`)],
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
    (ran) => expect((JSON.parse(ran.stdout) as { results: Array<{ task: string }> }).results.map((r) => r.task)).toEqual(['Deploy with pnpm in Docker']),
  ],
  [
    /^\.\/knowhub token create --me /,
    (ran, state) => {
      state.myToken = token(ran)
      expect(ran.stderr).toMatch(/for user:local \(read, write, secrets:read, admin, hub:admin\)/)
    },
  ],
  [
    /^\.\/knowhub token create --user alice --org acme$/,
    (ran, state) => {
      state.aliceToken = token(ran)
    },
  ],
  [/^\.\/knowhub save --task "记录/, (ran, state) => QUICK_START_CHECKS[0]![1](ran, state)],
  [/^\.\/knowhub search "用户/, (ran, { ids }) => expect(ran.stdout).toContain(ids[1])],
]

/** The check of a README command as written; fails the test when there is none. */
export function checkOf(command: string): Check {
  const check = QUICK_START_CHECKS.find(([pattern]) => pattern.test(command))
  expect(check, `no expectation for the README command: ${command}`).toBeDefined()
  return check![1]
}

/** The one line a command run on the server prints on stderr. */
export const ONE_LINE_NOTE = /^knowhub: the KnowHub server at http:\/\/127\.0\.0\.1:\d+ \(process \d+\) holds \.knowhub: running this command there$/m

/** A server started as a user starts it (`npm start`, `knowhub start`), in its own process group. */
export interface StartedServer {
  child: ChildProcess
  output: string[]
  /** SIGTERM to the whole group (npm's child too), then waits for the exit. */
  stop(): Promise<void>
}

/**
 * Runs `command` through bash in `cwd` and resolves once it prints that it listens.
 * @example
 * const server = await startAsUser('npm start', dir, env)
 */
export function startAsUser(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<StartedServer> {
  const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const output: string[] = []
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM')
    await exited
  }
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output.push(chunk)
      if (output.join('').includes('KnowHub listening on')) resolve({ child, output, stop })
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk))
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before listening:\n${output.join('')}`)))
  })
}
