/**
 * The dashboard under test: its bundle built from web/ into a temp folder (so a test always
 * runs the current source, never a stale dist/), a real hub (test/server/helpers.ts) and a
 * real server with the dashboard mounted as `knowhub start` mounts it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDashboard } from '../../src/server/dashboard/index.js'
import type { PackService } from '../../src/packs/service.js'
import type { RunningServer } from '../../src/server/serve.js'
import { buildDashboard } from '../../web/build.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

let built: Promise<string> | undefined

/** Builds the bundle once per test file; returns its folder. */
export function dashboardAssets(): Promise<string> {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-dashboard-'))
    await buildDashboard({ outdir: dir })
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    return dir
  })()
  return built
}

export interface DashboardHub extends TestHub {
  server: RunningServer
}

/**
 * A hub (hashed embedder by default) and a running server with the dashboard.
 * @example
 * const t = await openDashboardHub()
 * await fetch(`${t.server.url}/`)
 */
export async function openDashboardHub(options: { config?: Record<string, unknown>; packs?: PackService } = {}): Promise<DashboardHub> {
  const assetsDir = await dashboardAssets()
  const t = await openTestHub({ embedder: { provider: 'hashed' }, ...options.config })
  const server = await t.start({
    dashboard: (api) =>
      createDashboard({ hub: t.hub, apiAuthenticate: api.authenticate, latency: api.latency, assetsDir, ...(options.packs ? { packs: options.packs } : {}) }),
  })
  return Object.assign(t, { server })
}
