/**
 * Issue #16 item 11: `knowhub packs validate` checks what the reference CLI
 * checks — compile runs, context records and eval suites parse against their
 * schemas, source maps resolve, the profile, mode and primary document fit the
 * layout — and exits non-zero on errors.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { packsCommand } from '../../src/cli/commands/packs/packs.js'
import { validatePath } from '../../src/packs/index.js'
import { VALIDATION, captureIo, knowledge, tempDir, writeTree } from './helpers.js'

const PARITY = join(VALIDATION, 'records-parity')

afterEach(() => {
  process.exitCode = undefined
})

describe('11. validate parity with the reference CLI', () => {
  it('record files that break their schemas are errors with the file and field; unknown fields warnings; other files noted', async () => {
    const [report] = await validatePath(PARITY)
    const issues = (report?.issues ?? []).map((i) => `${i.severity} ${i.code} ${i.path ?? ''} ${i.field ?? ''}`.trim())
    expect(issues).toEqual(
      expect.arrayContaining([
        'error run_invalid runs/compile-2026-05-01.json trigger',
        'error run_invalid runs/context-2026-05-02T00-00-00Z.json activated_packs.0.activation',
        'error run_invalid evals/discovery.validation.json cases.0.expected',
        'warning run_unknown_field indexes/source-map.json claims.0',
        'info run_not_checked runs/lint-2026-05-03.json',
        'info run_not_checked evals/grounding-notes.json',
      ]),
    )
    expect(report?.errors).toBe(4)
  })

  it('source maps resolve: a missing compiled view is a warning, a section anchor to a missing source an error', async () => {
    const [report] = await validatePath(PARITY)
    const issues = report?.issues ?? []
    expect(issues).toContainEqual(expect.objectContaining({ severity: 'warning', code: 'path_missing', message: expect.stringContaining('compiled/gone.md') }))
    expect(issues).toContainEqual(
      expect.objectContaining({ severity: 'error', code: 'source_missing', message: expect.stringContaining('sources/missing.md') }),
    )
  })

  it('a bad claim of a source map is reported once, as a schema error', async () => {
    const [report] = await validatePath(join(VALIDATION, 'bad-source-map'))
    const third = (report?.issues ?? []).filter((i) => i.field?.startsWith('claims.3'))
    expect(third.map((i) => `${i.severity} ${i.code} ${i.field}`).sort()).toEqual([
      'error run_invalid claims.3.claim_id',
      'error run_invalid claims.3.source.path',
      'error run_invalid claims.3.status',
    ])
  })

  it('profile, mode and primary document against the layout', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'hybrid-empty/KNOWLEDGE.md': knowledge({ name: 'hybrid-empty', profile: 'hybrid' }),
        'not-markdown/KNOWLEDGE.md': knowledge({ name: 'not-markdown', profile: 'document-first' }, '# P\n').replace(
          'profile: document-first',
          'profile: document-first\nmetadata:\n  primaryDocument: documents/brief.pdf',
        ),
        'not-markdown/documents/brief.pdf': 'binary',
        'wiki-primary/KNOWLEDGE.md': knowledge({ name: 'wiki-primary', profile: 'wiki-first' }).replace(
          'profile: wiki-first',
          'profile: wiki-first\nmetadata:\n  primaryDocument: documents/brief.md',
        ),
        'wiki-primary/documents/brief.md': '# Brief\n',
        'wiki-primary/wiki/index.md': '# Index\n',
        'empty-persona/KNOWLEDGE.md': knowledge({ name: 'empty-persona', profile: 'hybrid' }, '# P\n\n## Boundaries\n- none\n').replace(
          'profile: hybrid',
          'profile: hybrid\nruntime:\n  mode: persona',
        ),
      })
      const reports = await validatePath(dir)
      const layout = (name: string): string[] =>
        (reports.find((r) => r.name === name)?.issues ?? []).filter((i) => i.code === 'profile_layout').map((i) => `${i.severity} ${i.field}`)
      expect(layout('hybrid-empty')).toEqual(['warning profile'])
      expect(layout('not-markdown')).toEqual(['warning metadata.primaryDocument'])
      expect(layout('wiki-primary')).toEqual(['info metadata.primaryDocument'])
      expect(layout('empty-persona')).toEqual(['warning profile', 'warning runtime.mode'])
    } finally {
      await cleanup()
    }
  })

  it('knowhub packs validate exits 1 on a record-file error', async () => {
    const capture = captureIo()
    process.exitCode = undefined
    await packsCommand({ io: capture.io, env: {} }).parseAsync(['validate', PARITY], { from: 'user' })
    expect(Number(process.exitCode ?? 0)).toBe(1)
    expect(capture.out()).toMatch(/^FAIL records-parity/)
    expect(capture.out()).toContain('error run_invalid [trigger]')
  })
})
