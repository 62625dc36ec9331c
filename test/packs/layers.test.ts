/**
 * Issue #16 item 12: the v0.7 layers (ontology/, answers/, metadata.primaryOntology,
 * metadata.primaryAnswers, type content-ontology) — validated, listed in the guide,
 * resolved as a task-relevant subgraph; claims that are unreviewed, disputed,
 * forbidden or without evidence never reach the context without an explicit warning.
 */
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { PackIndexCache, activatePack, loadPack, readPackFile, resolveContext, validatePath, type LoadedPack } from '../../src/packs/index.js'
import { loadLayers } from '../../src/packs/layers/load.js'
import { normaliseRecord } from '../../src/packs/layers/schema.js'
import { claimSafety } from '../../src/packs/resolve/subgraph.js'
import { listPackResources } from '../../src/packs/files/resources.js'
import { FIXTURES, VALIDATION, knowledge, tempDir, writeTree } from './helpers.js'

const ROOT = join(FIXTURES, 'standard', 'acme-ontology')
const cache = new PackIndexCache()
let pack: LoadedPack

beforeAll(async () => {
  const loaded = await loadPack(ROOT, { scope: 'project' })
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.rejected.issues))
  pack = loaded.pack
})

/** Unsafe claim texts of the fixture: each must only appear on a line that carries a warning. */
const UNSAFE = {
  'Team plans above 50 seats get 20 percent off.': 'unreviewed',
  'The Team plan includes a 99.99 percent uptime SLA.': 'disputed',
  'The Team plan is the most popular plan.': 'missing-evidence',
  'The Acme Widget is medically certified.': 'forbidden',
} as const

function assertWarnedLines(context: string): number {
  let seen = 0
  for (const line of context.split('\n')) {
    for (const text of Object.keys(UNSAFE)) {
      if (!line.includes(text)) continue
      seen++
      expect(line).toMatch(/WARNING (unreviewed|disputed|missing evidence)|FORBIDDEN/)
    }
  }
  return seen
}

describe('12. v0.7 layers: validation', () => {
  it('a well-formed ontology and answer pack validates without errors', async () => {
    const [report] = await validatePath(ROOT)
    expect(report?.errors).toBe(0)
    // The signal cited as evidence is reported: observations are never proof.
    expect(report?.issues.map((i) => i.code)).toEqual(['observation_as_evidence'])
  })

  it('missing declared files, a manifest outside its folder, broken JSON and a content-ontology pack without ontology/ are reported', async () => {
    const [report] = await validatePath(join(VALIDATION, 'ontology-invalid'))
    const codes = (report?.issues ?? []).map((i) => `${i.severity} ${i.code} ${i.field ?? i.path ?? ''}`)
    expect(codes).toEqual(
      expect.arrayContaining([
        'error path_missing metadata.primaryOntology',
        'error path_missing metadata.primaryAnswers',
        'warning invalid_field metadata.primaryAnswers',
        'warning ontology_missing type',
        'error layer_invalid answers/questions.json',
      ]),
    )
    expect(report?.errors).toBe(3)
  })

  it('dangling references, escaping and missing sources, invalid records and observations as evidence are reported', async () => {
    const [report] = await validatePath(join(VALIDATION, 'ontology-dangling'))
    const issues = report?.issues ?? []
    const find = (code: string, text: string): boolean => issues.some((i) => i.code === code && i.message.includes(text))
    expect(find('path_missing', 'ontology/ghost.json')).toBe(true)
    expect(find('layer_invalid', 'Record 4 of ontology/claims.json')).toBe(true)
    expect(find('layer_ref_missing', 'unknown concepts: nope')).toBe(true)
    expect(find('layer_ref_missing', 'unknown answer blocks: a-missing')).toBe(true)
    expect(find('layer_ref_missing', 'unknown citation targets: t-missing')).toBe(true)
    expect(find('observation_as_evidence', 'log-1')).toBe(true)
    expect(issues.find((i) => i.code === 'path_escape')?.severity).toBe('error')
    expect(issues.find((i) => i.code === 'source_missing' && i.message.includes('sources/gone.md'))?.severity).toBe('error')
    expect(report?.errors).toBe(2)
  })

  it('a file that holds no list of records is reported and the rest is used', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'p/KNOWLEDGE.md': knowledge({ name: 'p', profile: 'hybrid' }),
        'p/ontology/concepts.json': '{"a": 1}',
        'p/ontology/claims.json': '[{"id": "c", "text": "Widgets are green.", "reviewStatus": "approved", "sourceRefs": ["sources/s.md"]}]',
        'p/sources/s.md': '# s\n',
      })
      const loaded = await loadPack(join(dir, 'p'))
      if (!loaded.ok) throw new Error('did not load')
      const graph = await loadLayers(loaded.pack, (await listPackResources(loaded.pack)).resources)
      expect(graph.issues.map((i) => `${i.code} ${i.path}`)).toEqual(['layer_invalid ontology/concepts.json'])
      expect(graph.claims.get('c')?.text).toBe('Widgets are green.')
    } finally {
      await cleanup()
    }
  })

  it('reads snake_case keys and synonyms as the record fields', () => {
    expect(normaliseRecord({ claim_id: 'c1', statement: 'x', concept_ids: ['a'], evidence_status: 'verified' }, 'claim')).toMatchObject({
      id: 'c1',
      text: 'x',
      conceptIds: ['a'],
      evidenceStatus: 'verified',
    })
  })
})

describe('12. v0.7 layers: the guide lists them', () => {
  it('lists ontology/ and answers/ files by kind and marks the declared primary files', async () => {
    const activation = await activatePack(pack)
    expect(activation.content).toContain('<file kind="ontology" primary="true">ontology/ontology.json</file>')
    expect(activation.content).toContain('<file kind="answers" primary="true">answers/questions.json</file>')
    expect(activation.content).toContain('<file kind="ontology">ontology/claims.json</file>')
    expect(activation.content).toContain('<file kind="primary">documents/product-brief.md</file>')
  })
})

describe('12. v0.7 layers: task-relevant subgraphs, never an unsafe claim without a warning', () => {
  it('a price question gets the answer record and the plan subgraph: the verified price as a fact, every other claim under its warning', async () => {
    const r = await resolveContext({ task: 'How much does the Team plan cost?', packs: [pack], budget: 4000, cache })
    expect(r.context).toContain('- [claim-team-price] The Team plan costs 29 USD per seat per month. (evidence: sources/pricing.md#L4)')
    expect(r.context).toContain('## Question [q-team-price]: How much does the Team plan cost?')
    // The answer block is a draft: it is shown only under a warning.
    expect(r.context).toMatch(/Answer \[answer-team-price\] WARNING unreviewed/)
    expect(assertWarnedLines(r.context)).toBeGreaterThanOrEqual(3)
    // Not the whole ontology: nothing about offline queueing or medical use.
    expect(r.context).not.toContain('claim-offline')
    expect(r.context).not.toContain('medically')
    const audit = r.packs[0]
    expect(audit?.selected_files).toEqual(expect.arrayContaining(['ontology/ontology.json', 'answers/questions.json']))
    expect(audit?.source_anchors).toContain('sources/pricing.md#L4')
    const codes = (audit?.compile_warnings ?? []).map((w) => w.code)
    expect(codes).toEqual(expect.arrayContaining(['claim_unreviewed', 'claim_disputed', 'claim_missing_evidence']))
    const open = r.context.slice(0, r.context.indexOf('>') + 1)
    expect(open).toMatch(/warnings="[^"]*claim_unreviewed[^"]*"/)
    expect(open).toMatch(/warnings="[^"]*claim_disputed[^"]*"/)
    expect(r.tokens).toBeLessThanOrEqual(4000)
  })

  it('a forbidden claim comes with its constraint and the FORBIDDEN mark, never as a fact', async () => {
    const r = await resolveContext({ task: 'Is the Acme Widget medically certified?', packs: [pack], budget: 4000, cache })
    expect(r.context).toContain('[claim-medical] FORBIDDEN')
    expect(r.context).toContain('[forbid-medical] forbidden-claim: Never describe the Acme Widget as medically certified')
    expect(assertWarnedLines(r.context)).toBe(1)
    expect(r.packs[0]?.compile_warnings.map((w) => w.code)).toContain('claim_forbidden')
  })

  it('weak evidence is said so; citation targets are listed as candidates', async () => {
    const r = await resolveContext({ task: 'Can field teams use the widget without internet?', packs: [pack], budget: 4000, cache })
    expect(r.context).toContain('Answer [answer-offline] (weak evidence): Yes.')
    expect(r.context).toContain('Citation candidates: [cite-offline] documents/product-brief.md#offline (Offline mode)')
    expect(r.packs[0]?.source_anchors).toEqual(expect.arrayContaining(['sources/feedback.md#L3', 'documents/product-brief.md#offline']))
    assertWarnedLines(r.context)
  })

  it('at every budget the unsafe claims that fit still carry their warning; the budget is never exceeded', async () => {
    for (const budget of [200, 300, 500, 800]) {
      const r = await resolveContext({ task: 'Tell me about the Team plan: price, discounts, SLA', packs: [pack], budget, cache })
      expect(r.tokens).toBeLessThanOrEqual(budget)
      assertWarnedLines(r.context)
    }
  })

  it('a task about something else gets no subgraph', async () => {
    const r = await resolveContext({ task: 'What is the weather in Paris?', packs: [pack], budget: 4000, cache })
    expect(r.context).toBe('')
    expect(r.excluded.map((e) => e.code)).toEqual(['no_match'])
  })

  it('claim safety: a claim without a review state is reviewed only when the manifest says so; signals are never evidence', async () => {
    const graph = await loadLayers(pack, (await listPackResources(pack)).resources)
    const claim = { id: 'x', text: 'x', sourceRefs: ['sources/pricing.md'] }
    expect(claimSafety(claim, graph)).toBe('ok')
    expect(claimSafety(claim, { ...graph, manifest: { path: 'ontology/ontology.json', status: 'draft' } })).toBe('unreviewed')
    expect(claimSafety({ ...claim, sourceRefs: [], evidenceIds: ['sig-popular'], reviewStatus: 'approved' }, graph)).toBe('missing-evidence')
    expect(claimSafety({ ...claim, reviewStatus: 'approved', evidenceStatus: 'needs-verification' }, graph)).toBe('unreviewed')
    expect(claimSafety({ ...claim, reviewStatus: 'approved', evidenceStatus: 'missing' }, graph)).toBe('missing-evidence')
  })

  it('a draft ontology is flagged in the subgraph and its warnings', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'p/KNOWLEDGE.md': knowledge({ name: 'p', profile: 'hybrid' }),
        'p/ontology/ontology.json': '{"status": "draft"}',
        'p/ontology/claims.json': '[{"id": "c", "text": "Gizmos weigh 3 kg.", "sourceRefs": ["sources/s.md"]}]',
        'p/sources/s.md': '# s\n',
      })
      const loaded = await loadPack(join(dir, 'p'))
      if (!loaded.ok) throw new Error('did not load')
      const r = await resolveContext({ task: 'How much do gizmos weigh?', packs: [loaded.pack], budget: 2000 })
      expect(r.context).toContain('Ontology status: draft (not reviewed).')
      expect(r.context).toContain('[c] WARNING unreviewed')
      expect(r.packs[0]?.compile_warnings.map((w) => w.code)).toEqual(expect.arrayContaining(['ontology_status', 'claim_unreviewed']))
    } finally {
      await cleanup()
    }
  })
})

describe('12. v0.7 layers: raw files', () => {
  it('reading an ontology or answers file directly comes with the raw-records warning', async () => {
    const file = await readPackFile(pack, 'ontology/claims.json')
    expect(file.mimeType).toBe('application/json')
    expect(file.text).toContain('WARNING: raw ontology/answer records.')
    expect(file.text).toMatch(/warnings="raw_layer_records"/)
    const doc = await readPackFile(pack, 'documents/product-brief.md')
    expect(doc.text).not.toContain('raw ontology/answer records')
  })
})
