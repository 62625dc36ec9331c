/**
 * A real `knowhub start` in its own process (the CLI from source through tsx, or the built
 * bin/knowhub.js), on a free port, for tests and benchmarks that need several servers on one
 * database. Resolves once the server prints its URL; `stop()` sends SIGTERM and waits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface KnowHubProcess {
  /** `http://127.0.0.1:PORT` */
  url: string
  /** Everything it wrote to stdout and stderr so far (JSON log lines on stderr). */
  stdout: string[]
  stderr: string[]
  child: ChildProcess
  stop(): Promise<void>
}

export interface KnowHubProcessOptions {
  /** Environment on top of this process's (DATABASE_URL, KNOWHUB_*). */
  env: Record<string, string>
  /** `source` (default): src/ through tsx; `dist`: the built bin/knowhub.js. */
  entry?: 'source' | 'dist'
  /** Extra arguments of `knowhub start`. */
  args?: string[]
  /** Offer the packs discovery finds (default false: `--no-packs`). */
  packs?: boolean
  /** Give up after this long (default 60 s). */
  timeoutMs?: number
  /** Flags of the node process itself (e.g. `--max-semi-space-size=16`; `--workers` passes them on to the workers). */
  nodeFlags?: string[]
}

/**
 * Starts `knowhub start --host 127.0.0.1 --port 0 --no-packs` (packs with `packs: true`) and waits for its URL.
 * @example
 * const a = await startKnowHubProcess({ env: { DATABASE_URL: url, KNOWHUB_EMBEDDER: 'hashed' } })
 * await fetch(`${a.url}/healthz`)
 * await a.stop()
 */
export function startKnowHubProcess(options: KnowHubProcessOptions): Promise<KnowHubProcess> {
  const entry = options.entry === 'dist' ? ['bin/knowhub.js'] : ['--import', 'tsx', 'test/mcp/run-cli.ts']
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), ...entry, 'start', '--host', '127.0.0.1', '--port', '0', ...(options.packs ? [] : ['--no-packs']), ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const stdout: string[] = []
  const stderr: string[] = []
  const lines = (stream: NodeJS.ReadableStream, into: string[], onLine?: (line: string) => void) => {
    let rest = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n')
      rest = parts.pop() ?? ''
      for (const line of parts) {
        into.push(line)
        onLine?.(line)
      }
    })
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop()
      reject(new Error(`knowhub start did not print its URL within ${options.timeoutMs ?? 60_000} ms:\n${stderr.join('\n')}`))
    }, options.timeoutMs ?? 60_000)
    lines(child.stdout!, stdout, (line) => {
      const match = /KnowHub listening on (http:\/\/\S+?)(?: |$)/.exec(line)
      if (match) {
        clearTimeout(timer)
        resolve({ url: match[1]!, stdout, stderr, child, stop })
      }
    })
    lines(child.stderr!, stderr)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`knowhub start exited (${code ?? signal}) before listening:\n${stderr.join('\n')}\n${stdout.join('\n')}`))
    })
  })
}
