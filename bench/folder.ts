/**
 * Knowledge-folder benchmark (issue 30): export of 10,000 entries to a folder on disk, and the
 * import of that folder into a new, empty embedded store (hashed embedder), in this process
 * through the knowledge service and the folder's disk edge (src/knowledge/folder/disk.ts), as
 * `knowhub export --layout folder` and `knowhub import DIR` run them after opening the hub.
 * Also: an unchanged re-export (nothing written), a dry-run plan of the unchanged folder, one
 * sync step with nothing to do, and a check that the imported store exports byte-identically.
 * Goal: export ≤ 5 s, import ≤ 5 s. The load average is printed beside every figure.
 *
 *   npx tsx bench/folder.ts [--entries 10000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { readKnowledgeFolder, writeExportedFolder } from '../src/knowledge/folder/disk.js'
import { openKnowHub, type KnowHub } from '../src/app/open.js'
import { Principal } from '../src/core/principal.js'
import { importLines } from './import.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const PRINCIPAL = Principal.parse({ user: 'local', org: 'acme', team: 't1', project: 'p1', permissions: ['read', 'write', 'admin'] })
const SCOPES = ['user:local', 'org:acme', 'team:t1', 'project:p1', 'public']

function loadavg(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')
}

function open(dataDir: string): Promise<KnowHub> {
  return openKnowHub({ dataDir, embedder: { provider: 'hashed', dimension: 256 }, secrets: { key: Buffer.alloc(32, 3).toString('base64') } })
}

/** Times `fn`: wall seconds, and the process's CPU seconds (all threads; PGlite runs in this process), with the load average before and after. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; load: string }> {
  const before = loadavg()
  const cpu = process.cpuUsage()
  const start = performance.now()
  const value = await fn()
  const used = process.cpuUsage(cpu)
  return { value, seconds: (performance.now() - start) / 1000, load: `CPU ${round((used.user + used.system) / 1e6, 2)} s; load ${before} -> ${loadavg()}` }
}

export async function runFolderBench(options: { entries?: number } = {}): Promise<BenchResult[]> {
  const count = options.entries ?? 10_000
  const root = mkdtempSync(join(tmpdir(), 'knowhub-bench-folder-'))
  const results: BenchResult[] = []
  const source = await open(join(root, 'source'))
  let target: KnowHub | undefined
  try {
    // Entries spread over every section, a fifth of them with a profile category.
    const lines = importLines(count).map((line, i) => {
      const entry = JSON.parse(line) as Record<string, unknown>
      const profile = i % 5 === 4
      return JSON.stringify({
        ...entry,
        owner: 'user:local',
        scopes: [SCOPES[i % SCOPES.length]],
        ...(profile ? { types: ['user_profile'], tags: { category: ['preference', 'habit', 'constraint', 'background'][i % 4] } } : {}),
      })
    })
    const loaded = await source.knowledge.importJsonl(lines, PRINCIPAL)
    if (loaded.imported !== count) throw new Error(`loaded ${loaded.imported} of ${count}: ${JSON.stringify(loaded.errors.slice(0, 3))}`)
    const dir = join(root, 'knowledge')

    const exported = await timed(async () => writeExportedFolder(dir, await source.knowledge.exportFolder(PRINCIPAL)))
    const note = (extra: string, t: { load: string }) => `${count} entries, ${exported.value.files} files; ${extra}; ${t.load}`
    results.push({ name: 'folder export (service + write)', value: round(exported.seconds, 2), unit: 's', target: '≤ 5 s', note: note('new folder', exported) })

    const again = await timed(async () => writeExportedFolder(dir, await source.knowledge.exportFolder(PRINCIPAL)))
    if (again.value.written !== 0) throw new Error(`an unchanged store re-exported ${again.value.written} files`)
    results.push({ name: 'folder re-export, unchanged', value: round(again.seconds, 2), unit: 's', note: note('0 files written', again) })

    const plan = await timed(async () => source.knowledge.importFolder((await readKnowledgeFolder(dir)).files, PRINCIPAL, { dry_run: true }))
    if (plan.value.unchanged !== count) throw new Error(`dry run: ${plan.value.unchanged} unchanged of ${count}`)
    results.push({ name: 'folder import --dry-run, unchanged', value: round(plan.seconds, 2), unit: 's', note: note('read + plan', plan) })

    target = await open(join(root, 'target'))
    const into = target
    const imported = await timed(async () => into.knowledge.importFolder((await readKnowledgeFolder(dir)).files, PRINCIPAL))
    if (imported.value.added.length !== count || imported.value.errors.length > 0) {
      throw new Error(`imported ${imported.value.added.length} of ${count}: ${JSON.stringify(imported.value.errors.slice(0, 3))}`)
    }
    results.push({
      name: 'folder import into an empty store',
      value: round(imported.seconds, 2),
      unit: 's',
      target: '≤ 5 s',
      note: note('read + check + embed + insert', imported),
    })

    const check = JSON.stringify(await into.knowledge.exportFolder(PRINCIPAL)) === JSON.stringify((await readKnowledgeFolder(dir)).files)
    if (!check) throw new Error('the imported store does not export the same folder')

    const { files, state } = await readKnowledgeFolder(dir)
    const first = await into.knowledge.syncFolder({ files, state: state ?? null }, PRINCIPAL)
    const sync = await timed(async () => into.knowledge.syncFolder({ files: first.files, state: first.state }, PRINCIPAL))
    if (sync.value.report.changed.length > 0 || sync.value.conflicts.length > 0) throw new Error('a sync with nothing to do changed something')
    results.push({ name: 'folder sync, nothing to do', value: round(sync.seconds, 2), unit: 's', note: note('files in memory', sync) })
    for (const r of results) console.error(`${r.name}: ${r.value} ${r.unit} (${r.note})`)
  } finally {
    await source.close()
    await target?.close()
    rmSync(root, { recursive: true, force: true })
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { entries: { type: 'string' } } })
  const results = await runFolderBench(values.entries ? { entries: Number(values.entries) } : {})
  printTable('Knowledge folder', results)
  console.log(`\nwrote ${writeResults('folder', results)}`)
}
