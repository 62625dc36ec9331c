/**
 * Which KnowHub the example talks to, chosen so that trying it changes none of your data:
 *
 * - `--url URL` or `KNOWHUB_URL`: that running server.
 * - `--data-dir DIR` or `KNOWHUB_DATA_DIR`: that data folder, kept — through the server
 *   that holds it when one does (its lock file says where it listens), else through a
 *   KnowHub server the example starts on it and stops at the end.
 * - neither: a temporary data folder, served by a KnowHub server the example starts,
 *   stopped and removed at the end.
 *
 * The server is the package's own command (`knowhub start --port 0`), as your project
 * would run it with `npx knowhub start`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

/** The KnowHub the example runs against. */
export interface ExampleStore {
  /** The server's URL. */
  url: string
  /** A bearer token for it, when one is needed (a held folder's local key, or KNOWHUB_TOKEN). */
  token?: string
  /** One line saying which store is used. */
  label: string
  /** Stops a server the example started and removes a temporary folder. */
  close(): Promise<void>
}

/** What the command line says: the task, and `--url` / `--data-dir` when given. */
export interface ExampleArgs {
  task: string
  url?: string
  dataDir?: string
}

/**
 * Splits `--url URL` and `--data-dir DIR` (or `--x=value`) from the words of the task.
 * @example
 * parseExampleArgs(['--data-dir', 'kh', 'Bust', 'a', 'cache']) // { task: 'Bust a cache', dataDir: 'kh' }
 */
export function parseExampleArgs(argv: readonly string[]): ExampleArgs {
  const words: string[] = []
  const found: { url?: string; dataDir?: string } = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    const match = /^--(url|data-dir)(?:=(.*))?$/u.exec(arg)
    if (!match) {
      words.push(arg)
      continue
    }
    const value = match[2] ?? argv[++i]
    if (value === undefined || value === '') throw new Error(`${arg} needs a value`)
    if (match[1] === 'url') found.url = value
    else found.dataDir = value
  }
  return { task: words.join(' ').trim(), ...found }
}

/** The lock file of a data folder's embedded database says who holds it and where it listens. */
async function holder(dataDir: string): Promise<{ url: string; key?: string } | undefined> {
  try {
    const lock = JSON.parse(await readFile(join(dataDir, 'db.lock'), 'utf8')) as { pid?: unknown; url?: unknown; key?: unknown }
    if (typeof lock.url !== 'string' || typeof lock.pid !== 'number') return undefined
    process.kill(lock.pid, 0)
    return { url: lock.url, ...(typeof lock.key === 'string' ? { key: lock.key } : {}) }
  } catch {
    return undefined
  }
}

/** Runs `knowhub start --port 0` on a data folder and waits for the URL it prints. */
async function startServer(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ url: string; stop(): Promise<void> }> {
  const bin = join(dirname(createRequire(import.meta.url).resolve('knowhub/package.json')), 'bin', 'knowhub.js')
  const child: ChildProcess = spawn(process.execPath, [bin, 'start', '--port', '0', '--no-packs'], {
    env: { ...env, KNOWHUB_DATA_DIR: dataDir, KNOWHUB_LOG_FORMAT: 'json', KNOWHUB_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`KnowHub did not start within 120 s on ${dataDir}:\n${errors}`)), 120_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /KnowHub listening on (http:\/\/\S+)/u.exec(output)
      if (match?.[1]) {
        clearTimeout(timer)
        done(match[1])
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      fail(new Error(`KnowHub exited (code ${code}) before it listened on ${dataDir}:\n${errors.trim()}`))
    })
  })
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/**
 * Chooses the store as described above and says which in `label`.
 * @example
 * const store = await openExampleStore(parseExampleArgs(process.argv.slice(2)), process.env)
 * console.log(store.label)
 * try { await runAgent({ knowhubUrl: store.url, task }) } finally { await store.close() }
 */
export async function openExampleStore(args: ExampleArgs, env: NodeJS.ProcessEnv): Promise<ExampleStore> {
  const token = env.KNOWHUB_TOKEN ? { token: env.KNOWHUB_TOKEN } : {}
  const url = args.url ?? (env.KNOWHUB_URL || undefined)
  if (url) return { url, ...token, label: `Store: the KnowHub server at ${url}.`, close: async () => {} }

  const given = args.dataDir ?? (env.KNOWHUB_DATA_DIR || undefined)
  if (given) {
    const dataDir = resolve(given)
    const held = await holder(dataDir)
    if (held) {
      return {
        url: held.url,
        ...(env.KNOWHUB_TOKEN ? token : held.key ? { token: held.key } : {}),
        label: `Store: data folder ${dataDir}, through the KnowHub server at ${held.url} that holds it.`,
        close: async () => {},
      }
    }
    const server = await startServer(dataDir, env)
    return { url: server.url, ...token, label: `Store: data folder ${dataDir} (kept).`, close: () => server.stop() }
  }

  const dataDir = await mkdtemp(join(tmpdir(), 'knowhub-example-'))
  try {
    const server = await startServer(dataDir, env)
    return {
      url: server.url,
      label: `Store: a temporary data folder ${dataDir}, removed afterwards (--data-dir DIR or KNOWHUB_DATA_DIR keeps one; --url or KNOWHUB_URL uses a running server).`,
      async close() {
        await server.stop()
        await rm(dataDir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true })
    throw error
  }
}
