import { cp, readFile, readdir, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { PackSession, SessionSnapshot, UsageLog, UsageRecord, discoverPacks, resolveContext, type LoadedPack } from '../../src/packs/index.js'
import { USAGE_LOG_FILE } from '../../src/packs/session/usage-log.js'
import { PROJECT_PACKS, VALIDATION, knowledge, tempDir, writeTree } from './helpers.js'

async function copyPacks(dir: string, names: string[]): Promise<LoadedPack[]> {
  for (const name of names) await cp(join(PROJECT_PACKS, name), join(dir, 'packs', name), { recursive: true })
  return (await discoverPacks({ extraPaths: [join(dir, 'packs')] })).packs
}

const fixedClock = { now: () => new Date('2026-05-01T00:00:00.000Z') }

describe('pack session', () => {
  it('dedupes activations and records loaded files with hash, version, profile, mode and source map', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const packs = await copyPacks(dir, ['acme-product-brief', 'founder-persona'])
      const session = await PackSession.create({ packs })
      const first = await session.activate('acme-product-brief')
      const second = await session.activate('acme-product-brief')
      expect(first.reused).toBe(false)
      expect(second.reused).toBe(true)
      expect(second.activation).toBe(first.activation)
      expect(session.active().map((a) => a.name)).toEqual(['acme-product-brief'])
      await session.resolve('What does the Team plan cost?')
      const files = await session.loadedFiles()
      expect(files).toContainEqual({
        pack: 'acme-product-brief',
        path: 'KNOWLEDGE.md',
        hash: packs[0]?.contentHash,
        version: '0.7.2',
        profile: 'document-first',
        runtime_mode: 'data',
        source_map: expect.stringMatching(/^sha256:/),
      })
      const pricing = files.find((f) => f.path === 'compiled/splits/acme-product-brief/pricing.md')
      expect(pricing?.hash).toMatch(/^sha256:[0-9a-f]{64}$/)
      await expect(session.activate('nope')).rejects.toSatisfy((e: unknown) => isKnowHubError(e, 'not_found'))
    } finally {
      await cleanup()
    }
  })

  it('needs confirmation for a disputed pack, remembered once given', async () => {
    const packs = (await discoverPacks({ extraPaths: [join(VALIDATION, 'disputed-pack')] })).packs
    const session = await PackSession.create({ packs })
    await expect(session.activate('disputed-pack')).rejects.toSatisfy((e: unknown) => isKnowHubError(e, 'confirmation_required'))
    session.confirm('disputed-pack')
    await session.activate('disputed-pack')
    const r = await session.resolve('launch date')
    expect(r.excluded).toEqual([])
    expect(r.context).toContain('2026-09-01')
  })

  it('refresh() reloads changed files and marks the contexts that used them stale', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const packs = await copyPacks(dir, ['acme-product-brief', 'hybrid-support-ops'])
      const session = await PackSession.create({ packs })
      await session.activate('acme-product-brief')
      const acmeContext = await session.resolve('What does the Team plan cost?')
      const hybridContext = await session.resolve('How fast is severity 1 escalated?', { packs: ['hybrid-support-ops'] })
      expect(await session.refresh()).toMatchObject({ changedPacks: [], changedFiles: [], staleContexts: [] })

      const pricing = join(dir, 'packs', 'acme-product-brief', 'compiled', 'splits', 'acme-product-brief', 'pricing.md')
      await writeFile(pricing, (await readFile(pricing, 'utf8')).replace('99 USD', '119 USD'))
      const knowledgeFile = join(dir, 'packs', 'acme-product-brief', 'KNOWLEDGE.md')
      await writeFile(knowledgeFile, (await readFile(knowledgeFile, 'utf8')).replace('version: 0.7.2', 'version: 0.7.3'))
      const report = await session.refresh()
      expect(report.changedPacks).toEqual(['acme-product-brief'])
      expect(report.changedFiles).toContainEqual({ pack: 'acme-product-brief', path: 'compiled/splits/acme-product-brief/pricing.md' })
      expect(report.staleContexts).toEqual([acmeContext.contextId])
      expect(session.contexts().find((c) => c.id === hybridContext.contextId)?.stale).toBe(false)
      const fresh = await session.resolve('What does the Team plan cost?')
      expect(fresh.context).toContain('119 USD')
      expect(fresh.packs[0]?.version).toBe('0.7.3')
    } finally {
      await cleanup()
    }
  })

  it('refresh() reloads with the options the packs were discovered with: an allowed type or a large KNOWLEDGE.md is not lost or changed', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const body = `# House rules\n\n${'The forklift stays below ten km/h in the hall. '.repeat(7000)}\n`
      await writeTree(dir, {
        'packs/house-rules/KNOWLEDGE.md': knowledge({ name: 'house-rules', type: 'site-rules', trust: 'official' }, body),
        'packs/house-rules/compiled/briefing.md': '# Briefing\n\nForklift speed limit: 10 km/h.\n',
      })
      const options = { extraPaths: [join(dir, 'packs')], allowedTypes: ['site-rules'], maxKnowledgeBytes: 1024 * 1024 }
      const packs = (await discoverPacks(options)).packs
      expect(packs.map((p) => p.item.name)).toEqual(['house-rules'])
      expect(packs[0]?.issues.some((i) => i.code === 'file_too_large')).toBe(false)
      const session = await PackSession.create({ packs, load: options })
      await session.activate('house-rules')
      const context = await session.resolve('forklift speed limit')
      expect(await session.refresh()).toEqual({ changedPacks: [], changedFiles: [], staleContexts: [], lostPacks: [], needsConfirmation: [] })
      expect(session.contexts().find((c) => c.id === context.contextId)?.stale).toBe(false)
    } finally {
      await cleanup()
    }
  })

  it('snapshot()/restore() reload guides and context byte-identically; changes are reported as stale', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const packs = await copyPacks(dir, ['acme-product-brief', 'founder-persona'])
      const session = await PackSession.create({ packs })
      await session.activate('founder-persona')
      await session.activate('acme-product-brief')
      const before = await session.resolve("A post in Mara's voice about the battery life", { budget: 3000 })
      const snapshot = JSON.parse(JSON.stringify(session.snapshot())) as unknown
      expect(SessionSnapshot.safeParse(snapshot).success).toBe(true)

      const { session: restored, report } = await PackSession.restore(snapshot, { packs })
      expect(report).toEqual({
        guides: ['founder-persona', 'acme-product-brief'],
        changedGuides: [],
        contexts: [before.contextId],
        staleContexts: [],
        lostPacks: [],
      })
      expect(restored.active().map((a) => a.content)).toEqual(session.active().map((a) => a.content))
      expect(restored.contexts()[0]?.result.context).toBe(before.context)
      expect(restored.contexts()[0]?.id).toBe(before.contextId)

      const facts = join(dir, 'packs', 'acme-product-brief', 'compiled', 'facts.md')
      await writeFile(facts, '# Facts\n\n- Battery life 20 hours.\n')
      const reloaded = (await discoverPacks({ extraPaths: [join(dir, 'packs')] })).packs
      const again = await PackSession.restore(snapshot, { packs: reloaded })
      expect(again.report.staleContexts).toEqual([before.contextId])
      expect(again.session.contexts()[0]?.stale).toBe(true)
      expect(again.session.contexts()[0]?.result.context).toContain('Battery life 20 hours')

      const lost = await PackSession.restore(snapshot, { packs: reloaded.filter((p) => p.item.name !== 'founder-persona') })
      expect(lost.report.lostPacks).toEqual(['founder-persona'])
      await expect(PackSession.restore({ version: 2 }, { packs })).rejects.toMatchObject({ code: 'validation_error' })
    } finally {
      await cleanup()
    }
  })
})

describe('usage log', () => {
  it('writes one JSONL record per pack as in seed 000 Step 8, to the log folder only', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const packs = await copyPacks(dir, ['acme-product-brief'])
      const log = await UsageLog.create({ dir: join(dir, 'logs'), clock: fixedClock })
      const session = await PackSession.create({ packs, usageLog: log })
      await session.activate('acme-product-brief')
      await session.resolve('What is the enterprise price?')
      const lines = (await readFile(join(dir, 'logs', USAGE_LOG_FILE), 'utf8')).trim().split('\n')
      expect(lines).toHaveLength(1)
      const record = UsageRecord.parse(JSON.parse(lines[0] ?? ''))
      expect(Object.keys(record)).toEqual([
        'pack',
        'version',
        'status',
        'profile',
        'runtime_mode',
        'selected_files',
        'grounding',
        'citation_gaps',
        'warnings',
        'timestamp',
      ])
      expect(record).toMatchObject({
        pack: 'acme-product-brief',
        version: '0.7.2',
        status: 'ready',
        profile: 'document-first',
        runtime_mode: 'data',
        grounding: 'required',
        timestamp: '2026-05-01T00:00:00Z',
      })
      expect(record.selected_files).toContain('compiled/splits/acme-product-brief/pricing.md')
      expect(record.warnings.some((w) => w.includes('needs-review compile run'))).toBe(true)
      expect(existsSync(join(dir, 'packs', 'acme-product-brief', 'runs', 'usage.jsonl'))).toBe(false)
      expect((await readdir(join(dir, 'packs', 'acme-product-brief', 'runs'))).sort()).toEqual([
        'compile-2026-04-01T00-00-00Z.json',
        'compile-2026-05-01T00-00-00Z.json',
      ])
    } finally {
      await cleanup()
    }
  })

  it("writes into a pack's runs/ only when configured, and refuses a log folder inside a pack", async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const packs = await copyPacks(dir, ['acme-product-brief'])
      const result = await resolveContext({ task: 'Team plan price', packs })
      const runs = await UsageLog.create({ packRuns: true, clock: fixedClock })
      await runs.record(result, packs)
      const line = (await readFile(join(dir, 'packs', 'acme-product-brief', 'runs', 'usage.jsonl'), 'utf8')).trim()
      expect(JSON.parse(line)).toMatchObject({ pack: 'acme-product-brief' })
      const inside = await UsageLog.create({ dir: join(dir, 'packs', 'acme-product-brief', 'logs') })
      await expect(inside.record(result, packs)).rejects.toSatisfy((e: unknown) => isKnowHubError(e, 'forbidden'))
      expect(existsSync(join(dir, 'packs', 'acme-product-brief', 'logs'))).toBe(false)
    } finally {
      await cleanup()
    }
  })
})
