/**
 * Issue #16 item 10: context-resolution records in the standard's
 * `context-resolution` shape (activation explicit | implicit | resolver-driven),
 * written to the log folder and, when configured, to a pack's runs/; and
 * `knowhub packs validate-run FILE` for compile runs, context resolutions,
 * selection evals and source maps.
 */
import { cp, readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { packsCommand } from '../../src/cli/commands/packs/packs.js'
import { isKnowHubError } from '../../src/core/errors.js'
import { ContextResolutionRecord, PackIndexCache, contextRecord, createPackService, loadPack, resolveContext, validateRunFile } from '../../src/packs/index.js'
import { CONTEXT_LOG_FILE, runStatus } from '../../src/packs/session/context-record.js'
import { FIXTURES, captureIo, tempDir } from './helpers.js'

const STANDARD = join(FIXTURES, 'standard')
const RECORDS = join(FIXTURES, 'records')

async function run(args: string[]): Promise<{ out: string; err: string; exitCode: number }> {
  const capture = captureIo()
  process.exitCode = undefined
  await packsCommand({ io: capture.io, env: {} }).parseAsync(args, { from: 'user' })
  const exitCode = Number(process.exitCode ?? 0)
  process.exitCode = undefined
  return { out: capture.out(), err: capture.err(), exitCode }
}

afterEach(() => {
  process.exitCode = undefined
})

describe('10. context-resolution records', () => {
  it('the log folder gets one record per resolve: named packs explicit, packs matched by the task implicit', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const service = createPackService({
        discovery: { extraPaths: [STANDARD] },
        usageLog: { dir: join(dir, 'logs') },
      })
      const named = await service.resolve({ task: 'What does the Team plan cost?', packs: ['acme-widget', 'mara-persona'], budget: 2000 })
      await service.resolve({ task: 'Acme Widget Team plan price', budget: 2000 })
      const lines = (await readFile(join(dir, 'logs', CONTEXT_LOG_FILE), 'utf8')).trim().split('\n')
      expect(lines).toHaveLength(2)
      const [first, second] = lines.map((l) => ContextResolutionRecord.parse(JSON.parse(l)))
      expect(first?.query).toBe('What does the Team plan cost?')
      expect(first?.run_id).toMatch(/^context-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ-[0-9a-f]{6}$/)
      expect(first?.activated_packs.map((p) => [p.name, p.activation])).toEqual([
        ['acme-widget', 'explicit'],
        ['mara-persona', 'explicit'],
      ])
      expect(first?.token_estimate).toBe(named.result.tokens)
      expect(first?.wrapper_order).toEqual(named.result.wrapper_order)
      // Persona wrapper first: its pack's wrapper_order is 1 (the standard counts from 1).
      expect(first?.activated_packs.find((p) => p.name === 'mara-persona')?.wrapper_order).toBe(1)
      const acme = first?.activated_packs.find((p) => p.name === 'acme-widget')
      expect(acme).toMatchObject({ status: 'ready', trust: 'user-confirmed', profile: 'document-first', runtime_mode: 'data' })
      expect(acme?.builder_skill).toEqual({ name: 'brand-product-knowledge-builder', version: '1.0.0' })
      expect(acme?.selected_files).toEqual(named.result.packs.find((p) => p.pack === 'acme-widget')?.selected_files)
      expect(second?.activated_packs.every((p) => p.activation === 'implicit')).toBe(true)
      // Each line passes validate-run.
      expect((await validateRunFile(join(dir, 'logs', CONTEXT_LOG_FILE))).ok).toBe(true)
    } finally {
      await cleanup()
    }
  })

  it("a pack's runs/ gets runs/context-<run_id>.json only when configured; it never invalidates the pack's index", async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await cp(join(STANDARD, 'acme-widget'), join(dir, 'acme-widget'), { recursive: true })
      const cache = new PackIndexCache({ revalidateMs: 0 })
      const service = createPackService({ discovery: { extraPaths: [dir] }, usageLog: { packRuns: true }, indexCache: cache })
      await service.resolve({ task: 'Team plan price', packs: ['acme-widget'], budget: 1500 })
      const loaded = await loadPack(join(dir, 'acme-widget'))
      if (!loaded.ok) throw new Error('did not load')
      const before = await cache.get(loaded.pack)
      await service.resolve({ task: 'Team plan price', packs: ['acme-widget'], budget: 1500 })
      const files = (await readdir(join(dir, 'acme-widget', 'runs'))).sort()
      const records = files.filter((f) => /^context-.*\.json$/.test(f))
      expect(records).toHaveLength(2)
      expect(files).toContain('usage.jsonl')
      expect(files.some((f) => f.endsWith('.tmp'))).toBe(false)
      const report = await validateRunFile(join(dir, 'acme-widget', 'runs', records[0] as string))
      expect(report).toMatchObject({ ok: true, schema: 'context-resolution', records: 1, errors: 0, warnings: 0 })
      expect(await cache.get(loaded.pack)).toBe(before)
    } finally {
      await cleanup()
    }
  })

  it('no record without a resolved pack; the run status follows the packs and missing facts', async () => {
    const loaded = await loadPack(join(STANDARD, 'acme-widget'))
    if (!loaded.ok) throw new Error('did not load')
    const result = await resolveContext({ task: 'Team plan price', packs: [loaded.pack], budget: 1500 })
    expect(contextRecord({ ...result, packs: [] }, [loaded.pack], { at: new Date() })).toBeUndefined()
    const record = contextRecord(result, [loaded.pack], { at: new Date('2026-05-06T09:10:00Z'), activation: () => 'resolver-driven', runId: 'context-x' })
    expect(record?.activated_packs[0]?.activation).toBe('resolver-driven')
    expect(record?.run_id).toBe('context-x')
    const one = result.packs[0]
    if (!one) throw new Error('no pack')
    expect(runStatus({ context: '', packs: result.packs, missing: [] })).toBe('failed')
    expect(runStatus({ context: 'x', packs: [{ ...one, status: 'disputed' }], missing: [] })).toBe('disputed')
    expect(runStatus({ context: 'x', packs: [{ ...one, status: 'stale' }], missing: [] })).toBe('stale')
    expect(runStatus({ context: 'x', packs: [{ ...one, status: 'draft' }], missing: [] })).toBe('needs-review')
    expect(runStatus({ context: 'x', packs: [one], missing: ['warranty'] })).toBe('needs-review')
    expect(runStatus({ context: 'x', packs: [one], missing: [] })).toBe('passed')
  })
})

describe('10. knowhub packs validate-run', () => {
  it('passes a context record, a compile run and a JSON Lines log that follow their schemas (exit 0)', async () => {
    for (const file of ['runs/context-2026-05-06T09-10-00Z.json', 'runs/compile-2026-05-01.json']) {
      const r = await run(['validate-run', join(RECORDS, file)])
      expect(r.exitCode, file).toBe(0)
      expect(r.out).toMatch(/^ok\s/)
    }
    const json = JSON.parse((await run(['validate-run', join(RECORDS, 'runs/compile-2026-05-01.json'), '--json'])).out) as { schema: string; ok: boolean }
    expect(json).toMatchObject({ schema: 'compile-run', ok: true })
  })

  it('reports every schema violation with its field and exits 1', async () => {
    const r = await run(['validate-run', join(RECORDS, 'runs/context-bad.json'), '--json'])
    expect(r.exitCode).toBe(1)
    const report = JSON.parse(r.out) as { errors: number; issues: { code: string; field?: string }[] }
    expect(report.issues.map((i) => `${i.code} ${i.field}`).sort()).toEqual(
      [
        'run_invalid query',
        'run_invalid status',
        'run_invalid activated_packs.0.activation',
        'run_invalid activated_packs.0.selected_files',
        'run_invalid activated_packs.0.wrapper_order',
        'run_invalid token_estimate',
      ].sort(),
    )
    const compile = await validateRunFile(join(RECORDS, 'runs/compile-bad.json'))
    expect(compile.issues.map((i) => i.field).sort()).toEqual(['inputs', 'outputs.0.operation', 'run_id', 'trigger'])
    const empty = await validateRunFile(join(RECORDS, 'runs/context-empty-packs.json'))
    expect(empty.issues.map((i) => i.field)).toEqual(['activated_packs'])
    const evalSuite = await validateRunFile(join(RECORDS, 'evals/discovery.validation.json'))
    expect(evalSuite).toMatchObject({ ok: false, schema: 'selection-eval' })
    expect(evalSuite.issues.map((i) => i.field)).toEqual(['cases.0.expected'])
  })

  it('fields the schema does not define are warnings only, as in the reference CLI', async () => {
    const r = await validateRunFile(join(RECORDS, 'runs/context-extra-field.json'))
    expect(r.ok).toBe(true)
    expect(r.issues.map((i) => `${i.severity} ${i.code}`)).toEqual(['warning run_unknown_field', 'warning run_unknown_field'])
    expect(r.issues.map((i) => i.message).join(' ')).toMatch(/score.*client|client.*score/s)
    const map = await validateRunFile(join(RECORDS, 'source-map.json'))
    expect(map).toMatchObject({ ok: true, schema: 'source-map', warnings: 1 })
  })

  it('a bad line of a JSON Lines log is reported with its line number', async () => {
    const r = await validateRunFile(join(RECORDS, 'context-resolutions.jsonl'))
    expect(r).toMatchObject({ ok: false, records: 2, errors: 1 })
    expect(r.issues[0]?.path).toMatch(/context-resolutions\.jsonl:2$/)
  })

  it('invalid JSON, an unknown shape and a missing file are errors', async () => {
    const broken = await run(['validate-run', join(RECORDS, 'runs/broken.json')])
    expect(broken.exitCode).toBe(1)
    expect(broken.out).toContain('run_invalid')
    const unknown = await validateRunFile(join(RECORDS, 'runs/unknown.json'))
    expect(unknown.issues.map((i) => i.code)).toEqual(['run_unknown_schema'])
    await expect(validateRunFile(join(RECORDS, 'runs/nope.json'))).rejects.toSatisfy((e: unknown) => isKnowHubError(e, 'not_found'))
    await expect(validateRunFile(RECORDS)).rejects.toSatisfy((e: unknown) => isKnowHubError(e, 'validation_error'))
    const missing = await run(['validate-run', join(RECORDS, 'runs/nope.json'), '--json'])
    expect(missing.exitCode).toBe(1)
    expect(JSON.parse(missing.out)).toMatchObject({ error: { code: 'not_found' } })
  })
})
