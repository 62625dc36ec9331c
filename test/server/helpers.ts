/**
 * A real KnowHub server for tests: PGlite in a temp dir, the real services, bound to
 * 127.0.0.1 on a free port, with a logger that records every line (for leak scans).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openKnowHub, type KnowHub, type OpenDeps } from '../../src/app/open.js'
import type { Logger } from '../../src/core/logger.js'
import { startServer, type RunningServer, type StartServerOptions } from '../../src/server/serve.js'
import { createTestDatabase, type Backend } from '../helpers/stores.js'

/**
 * The backend the hub of openTestHub runs on: `pglite` in the `all` project, else the
 * PostgreSQL backend of the vitest project (vitest.config.ts sets KNOWHUB_TEST_HUB_BACKEND).
 */
export const HUB_BACKEND: Backend = (process.env.KNOWHUB_TEST_HUB_BACKEND as Backend | undefined) ?? 'pglite'

/** A logger that keeps every line as JSON text. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ level, message, ...fields }))
  return { lines, debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') }
}

export interface TestHub {
  hub: KnowHub
  dataDir: string
  /** Every log line of the hub's services and of the server. */
  logs: string[]
  logger: Logger & { lines: string[] }
  start(options?: Omit<StartServerOptions, 'hub'>): Promise<RunningServer>
  close(): Promise<void>
}

/**
 * Opens a hub on a fresh PGlite folder — or, in the vitest projects that run the server tests
 * on a PostgreSQL backend (vitest.config.ts, KNOWHUB_TEST_HUB_BACKEND), on a fresh database of
 * that backend. Server settings default to no rate limit.
 * @example
 * const t = await openTestHub()
 * const server = await t.start({ port: 0 })
 */
export async function openTestHub(config: Record<string, unknown> = {}, deps: Omit<OpenDeps, 'logger'> = {}): Promise<TestHub> {
  const dataDir = mkdtempSync(join(tmpdir(), 'knowhub-server-'))
  const logger = recordingLogger()
  const database = HUB_BACKEND !== 'pglite' && !('databaseUrl' in config) ? await createTestDatabase(HUB_BACKEND) : undefined
  const hub = await openKnowHub(
    {
      dataDir,
      ...(database ? { databaseUrl: database.options.databaseUrl } : {}),
      secrets: { key: Buffer.alloc(32, 7).toString('base64') },
      ...config,
      server: { port: 0, rateLimit: 0, ...(config.server as object | undefined) },
    },
    { ...deps, logger },
  )
  const servers: RunningServer[] = []
  return {
    hub,
    dataDir,
    logs: logger.lines,
    logger,
    async start(options = {}) {
      const server = await startServer({ hub, host: '127.0.0.1', port: 0, logger, ...options })
      servers.push(server)
      return server
    },
    async close() {
      for (const server of servers) await server.close().catch(() => {})
      await hub.close().catch(() => {})
      await database?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

// Response bodies are checked field by field in the tests.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

export interface ApiResponse<T = Json> {
  status: number
  headers: Headers
  body: T
  text: string
}

/** A small JSON client for a running server. */
export function client(baseUrl: string, token?: string) {
  async function call<T = Json>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const init: RequestInit = {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
    }
    if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body)
    const response = await fetch(`${baseUrl}${path}`, init)
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text === '' ? undefined : JSON.parse(text)
    } catch {
      parsed = text
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text }
  }
  return {
    get: <T = Json>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T = Json>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('POST', path, body, headers),
    put: <T = Json>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('PUT', path, body, headers),
    patch: <T = Json>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('PATCH', path, body, headers),
    delete: <T = Json>(path: string, headers?: Record<string, string>) => call<T>('DELETE', path, undefined, headers),
  }
}

export type Client = ReturnType<typeof client>

/** Asserts the one error shape and returns the error object. */
export function errorOf(response: ApiResponse): { code: string; message: string; details: Record<string, unknown> } {
  const error = (response.body as { error?: unknown })?.error as { code: string; message: string; details: Record<string, unknown> } | undefined
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string' || typeof error.details !== 'object') {
    throw new Error(`not an error body (status ${response.status}): ${response.text.slice(0, 300)}`)
  }
  return error
}
