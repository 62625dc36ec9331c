/**
 * Forgetting a user (issue 31): a hub of `others` entries (the import benchmark's lines) plus a
 * user with `entries` entries, versions, feedback on 100 other entries, resources with secrets
 * and a goal; then the forget's parts are timed — the dry run, the erasing transaction, and the
 * cleanup of the files — and the data folder is grepped for the user's marker. The cleanup is
 * measured both ways on two identical hubs: a plain VACUUM of the tables involved, and VACUUM
 * FULL (what `forget` runs), each followed by the WAL rotation; the table says which files still
 * hold the marker after each. PGlite by default; `--postgres` for a throwaway PostgreSQL server
 * (KNOWHUB_PG_BIN; or KNOWHUB_BENCH_PG_URL, a superuser's): its table files are not grepped here
 * (test/server/forget.test.ts does). The load average is printed beside every figure.
 *
 *   npx tsx bench/forget.ts [--entries 1000] [--others 10000] [--postgres]
 *   npm run bench -- --only forget
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openKnowHub, type KnowHub } from '../src/app/open.js'
import { Principal } from '../src/core/principal.js'
import { FORGET_TABLES, forgetUser, rotateWal } from '../src/store/users/erasure.js'
import { sql } from '../src/store/sql.js'
import pg from 'pg'
import { startTempPostgres, type TempPostgres } from '../test/helpers/pg-server.js'
import { importLines } from './import.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const OPERATOR = Principal.parse({ user: 'ops', permissions: ['read', 'write', 'admin', 'hub:admin'] })
const LOCAL = Principal.parse({ user: 'local', org: 'acme', permissions: ['read', 'write', 'admin'] })
const BOB = Principal.parse({ user: 'bob', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
const MARKER = 'zqb0bm4rkbench'

function loadavg(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; load: string }> {
  const before = loadavg()
  const start = performance.now()
  const value = await fn()
  return { value, seconds: (performance.now() - start) / 1000, load: `load ${before} -> ${loadavg()}` }
}

/** Files of the data folder holding the marker, named by relation where one owns them. */
async function filesWithMarker(hub: KnowHub, dataDir: string): Promise<string[]> {
  await hub.store.db.query(sql`CHECKPOINT`)
  let out = ''
  try {
    out = execFileSync('grep', ['-rl', MARKER, join(dataDir, 'db')]).toString()
  } catch {
    out = ''
  }
  const names: string[] = []
  for (const path of out.split('\n').filter(Boolean)) {
    const node = path.split('/').pop()!.split(/[._]/)[0]!
    const rows = /^\d+$/.test(node) ? await hub.store.db.query<{ relname: string }>(sql`SELECT relname FROM pg_class WHERE relfilenode = ${Number(node)}`) : []
    names.push(rows[0]?.relname ?? path.slice(path.indexOf('/db/') + 4))
  }
  return names.sort()
}

async function build(dataDir: string, databaseUrl: string | undefined, others: number, entries: number): Promise<KnowHub> {
  const hub = await openKnowHub({
    dataDir,
    ...(databaseUrl ? { databaseUrl } : {}),
    embedder: { provider: 'hashed', dimension: 256 },
    secrets: { key: Buffer.alloc(32, 3).toString('base64') },
  })
  await hub.tokens.create({ user: 'bob', org: 'acme', permissions: ['read', 'write'] })
  const lines = importLines(others).map((line) => JSON.stringify({ ...JSON.parse(line), scopes: ['org:acme'] }))
  await hub.knowledge.importJsonl(lines, LOCAL)
  const ids = (await hub.knowledge.list({ limit: 100 }, LOCAL)).items.map((e) => e.id)
  const bobs = importLines(entries).map((line, i) => {
    const entry = JSON.parse(line) as Record<string, unknown>
    return JSON.stringify({
      ...entry,
      id: `knowledge-bob-${i}`,
      owner: 'user:bob',
      scopes: [i % 2 ? 'user:bob' : 'org:acme'],
      content: `${String(entry.content)} ${MARKER}`,
    })
  })
  const report = await hub.knowledge.importJsonl(bobs, BOB)
  if (report.errors.length > 0 || report.imported !== entries) throw new Error(`import: ${JSON.stringify(report).slice(0, 500)}`)
  for (let i = 0; i < Math.min(50, entries); i++) await hub.knowledge.edit(`knowledge-bob-${i}`, { content: `revised by bob ${MARKER} ${i}` }, BOB)
  for (const id of ids) await hub.knowledge.feedback(id, { add_helpful_case: { task: `used by ${MARKER}` } }, BOB)
  for (let i = 0; i < 10; i++)
    await hub.resources.save(
      { id: `bob/secret-${i}`, title: 'login', body: MARKER, secure_body: `pw ${MARKER}`, content_type: 'credential', scopes: ['user:bob'] },
      BOB,
    )
  await hub.agent.goal({ action: 'create', trace_id: 'bob-trace', description: `reach ${MARKER}` }, BOB)
  await hub.store.db.query(sql`ANALYZE knowledge`)
  return hub
}

/** A new database on the server at `url` (a superuser's), for one run. */
async function newDatabase(url: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query(`CREATE DATABASE ${name}`)
  await c.end()
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

export async function runForgetBench(options: { entries?: number; others?: number; postgres?: boolean } = {}): Promise<BenchResult[]> {
  const entries = options.entries ?? 1_000
  const others = options.others ?? 10_000
  const results: BenchResult[] = []
  const backend = options.postgres ? 'postgres' : 'pglite'
  // PostgreSQL: a throwaway server (KNOWHUB_PG_BIN; with pgvector when that build has it), or KNOWHUB_BENCH_PG_URL (a superuser's).
  const server: TempPostgres | undefined = options.postgres && !process.env.KNOWHUB_BENCH_PG_URL ? await startTempPostgres() : undefined
  const serverUrl = process.env.KNOWHUB_BENCH_PG_URL ?? server?.url
  try {
    for (const cleanup of ['plain', 'full'] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), 'knowhub-bench-forget-'))
      const databaseUrl = options.postgres ? await newDatabase(serverUrl!, `bench_forget_${cleanup}_${process.pid}`) : undefined
      const hub = await build(dataDir, databaseUrl, others, entries)
      try {
        if (cleanup === 'plain') {
          const dry = await timed(() => hub.erasure.forget('user:bob', { dryRun: true }, OPERATOR))
          results.push({
            name: `${backend}: dry run (${entries} entries of ${entries + others})`,
            value: round(dry.seconds, 3),
            unit: 's',
            note: `${JSON.stringify(dry.value.erased)}; ${dry.load}`,
          })
        }
        const audit = { kind: 'forget' as const, subject: 'x', by: 'user:ops', org: null, at: new Date() }
        const erase = await timed(() => forgetUser(hub.store.db, 'user:bob', { dryRun: false, audit }))
        results.push({ name: `${backend}/${cleanup}: the erasing transaction`, value: round(erase.seconds, 3), unit: 's', note: erase.load })
        const files = await timed(async () => {
          for (const table of FORGET_TABLES) await hub.store.db.query(sql.raw(`VACUUM ${cleanup === 'full' ? 'FULL ' : ''}${table}`))
          await hub.store.db.query(sql`ANALYZE knowledge`)
          if (hub.store.db.kind === 'pglite') {
            await hub.store.db.query(sql`VACUUM FULL pg_statistic`)
            await rotateWal(hub.store.db)
          }
        })
        const left = hub.store.db.kind === 'pglite' ? await filesWithMarker(hub, dataDir) : []
        results.push({
          name: `${backend}/${cleanup}: ${cleanup === 'full' ? 'VACUUM FULL' : 'VACUUM'} of ${FORGET_TABLES.length} tables${backend === 'pglite' ? ' + WAL rotation' : ''}`,
          value: round(files.seconds, 3),
          unit: 's',
          note: `${hub.store.db.kind === 'pglite' ? `files with the marker after: ${left.length === 0 ? 'none' : left.join(', ')}` : 'table files: see test/server/forget.test.ts'}; ${files.load}`,
        })
      } finally {
        await hub.close()
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  } finally {
    await server?.stop()
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { entries: { type: 'string' }, others: { type: 'string' }, postgres: { type: 'boolean', default: false } } })
  const results = await runForgetBench({
    ...(values.entries ? { entries: Number(values.entries) } : {}),
    ...(values.others ? { others: Number(values.others) } : {}),
    postgres: values.postgres ?? false,
  })
  printTable('forget', results)
  writeResults('forget', results)
}
