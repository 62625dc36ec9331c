/**
 * Dashboard benchmark in a real headless Chromium (Debian's, via playwright-core): a server
 * with the dashboard over 10k entries (embedded PGlite, hashed embedder so that seeding
 * takes seconds, token mode), then
 * - first load of the search page: a fresh browser context (empty cache) from navigation
 *   to the search box, median and max of 5;
 * - search round trip in the page: from setting the route to the rendered result list
 *   (fetch, JSON, DOM), over 40 distinct queries, p50/p90/max;
 * - page weight: the bundle's JS + CSS as served (gzip) and raw.
 *
 *   npm run bench -- --only dashboard      (--quick: 2,000 entries)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { openKnowHub } from '../src/app/open.js'
import { createDashboard } from '../src/server/dashboard/index.js'
import { startServer } from '../src/server/serve.js'
import { launchChromium } from '../test/helpers/browser.js'
import { buildDashboard } from '../web/build.js'
import { corpus, exportLine } from './http.js'
import { percentile, round, type BenchResult } from './lib.js'

type Browser = Awaited<ReturnType<typeof launchChromium>>
type SessionCookie = { name: string; value: string; url: string; httpOnly: boolean; sameSite: 'Strict' }

/** Imports the synthetic corpus of bench/http.ts; returns its queries. */
async function seed(hub: Awaited<ReturnType<typeof openKnowHub>>, entries: number): Promise<string[]> {
  const principal = { user: 'bench', project: 'p0', org: 'acme', team: 'other', permissions: ['admin' as const] }
  const { docs, queries } = corpus(entries, 42)
  const started = performance.now()
  const lines = docs.map((doc, i) => exportLine(i, doc))
  const report = await hub.knowledge.importJsonl(lines, principal, { mode: 'partial', batchSize: 500 })
  if (report.errors.length > 0) throw new Error(`import failed: ${JSON.stringify(report.errors.slice(0, 3))}`)
  console.error(`seeded ${entries} entries in ${round((performance.now() - started) / 1000, 1)} s`)
  return queries
}

/** Fresh contexts (empty cache): navigation to the search box, in ms. */
async function firstLoads(browser: Browser, url: string, cookie: SessionCookie, count: number): Promise<number[]> {
  const loads: number[] = []
  for (let i = 0; i < count; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.addCookies([cookie])
    const page = await context.newPage()
    const started = performance.now()
    await page.goto(`${url}/#/search`)
    await page.locator('#q').waitFor()
    loads.push(performance.now() - started)
    await context.close()
  }
  return loads
}

/** In one page: route change → fetch → rendered result list, per query, in ms (the first five warm up). */
async function roundTrips(browser: Browser, url: string, cookie: SessionCookie, queries: readonly string[]): Promise<number[]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  await context.addCookies([cookie])
  const page = await context.newPage()
  await page.goto(`${url}/#/search`)
  await page.locator('#q').waitFor()
  const trips: number[] = []
  for (const [i, q] of queries.entries()) {
    const ms = (await page.evaluate(`new Promise((resolve) => {
      const started = performance.now()
      const observer = new MutationObserver(() => {
        if (document.querySelector('#results .count')) { observer.disconnect(); resolve(performance.now() - started) }
      })
      observer.observe(document.getElementById('app'), { childList: true, subtree: true })
      location.hash = '#/search?q=' + encodeURIComponent(${JSON.stringify(q)})
    })`)) as number
    if (i >= 5) trips.push(ms)
  }
  await context.close()
  return trips
}

/** The bundle as served (gzip, level 9 like the server) and raw, in bytes. */
function pageWeight(assetsDir: string): { gzJs: number; gzCss: number; js: number; css: number } {
  const js = readFileSync(join(assetsDir, 'app.js'))
  const css = readFileSync(join(assetsDir, 'app.css'))
  return { gzJs: gzipSync(js, { level: 9 }).byteLength, gzCss: gzipSync(css, { level: 9 }).byteLength, js: js.byteLength, css: css.byteLength }
}

export async function runDashboardBench(options: { entries?: number } = {}): Promise<BenchResult[]> {
  const entries = options.entries ?? 10_000
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-dashboard-bench-'))
  const assetsDir = join(dir, 'assets')
  await buildDashboard({ outdir: assetsDir })
  const hub = await openKnowHub({
    dataDir: join(dir, 'data'),
    embedder: { provider: 'hashed' },
    secrets: { key: Buffer.alloc(32, 5).toString('base64') },
    server: { rateLimit: 0 },
  })
  const browser = await launchChromium()
  try {
    const queries = await seed(hub, entries)
    const { token } = await hub.tokens.create({ user: 'bench', project: 'p0', org: 'acme', permissions: ['read', 'write'], name: 'bench' })
    const server = await startServer({
      hub,
      host: '127.0.0.1',
      port: 0,
      dashboard: (api) => createDashboard({ hub, apiAuthenticate: api.authenticate, latency: api.latency, assetsDir }),
    })
    await hub.knowledge.warmUp()
    try {
      const cookie: SessionCookie = { name: 'kh_session', value: token, url: server.url, httpOnly: true, sameSite: 'Strict' }
      const loads = (await firstLoads(browser, server.url, cookie, 5)).sort((a, b) => a - b)
      const trips = (await roundTrips(browser, server.url, cookie, queries.slice(0, 45))).sort((a, b) => a - b)
      const weight = pageWeight(assetsDir)
      const load = os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')
      const note = `${entries} entries, PGlite, hashed embedder, Chromium ${browser.version()}, load ${load}`
      return [
        { name: 'dashboard first load of the search page (median of 5)', value: round(percentile(loads, 50), 0), unit: 'ms', target: '≤ 1000 ms', note },
        { name: 'dashboard first load (max of 5)', value: round(loads.at(-1)!, 0), unit: 'ms' },
        {
          name: 'dashboard search round trip p50',
          value: round(percentile(trips, 50), 0),
          unit: 'ms',
          target: '≤ 200 ms',
          note: `${trips.length} distinct queries`,
        },
        { name: 'dashboard search round trip p90', value: round(percentile(trips, 90), 0), unit: 'ms' },
        { name: 'dashboard search round trip max', value: round(trips.at(-1)!, 0), unit: 'ms' },
        {
          name: 'dashboard page weight JS+CSS gzip',
          value: weight.gzJs + weight.gzCss,
          unit: 'bytes',
          note: `JS ${weight.gzJs} + CSS ${weight.gzCss} gzip; raw JS ${weight.js} + CSS ${weight.css}`,
        },
      ]
    } finally {
      await server.close()
    }
  } finally {
    await browser.close()
    await hub.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./lib.js')
  printTable('dashboard', await runDashboardBench())
}
