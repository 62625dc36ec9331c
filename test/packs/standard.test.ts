/**
 * The Agent Knowledge standard beyond seeds 000/001 (issue #16 items 6–15):
 * wrapper attributes, catalog fields, status rules, selection by path,
 * enable/disable, trust gate, context-resolution records, validation parity,
 * v0.7 ontology and answers, security scan, lime's split manifest.
 */
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { PackIndexCache, loadPack, renderCatalog, resolveContext, type LoadedPack } from '../../src/packs/index.js'
import { FIXTURES, PROJECT_PACKS } from './helpers.js'

const STANDARD = join(FIXTURES, 'standard')

async function pack(root: string): Promise<LoadedPack> {
  const r = await loadPack(root, { scope: 'project' })
  if (!r.ok) throw new Error(`fixture ${root} did not load: ${JSON.stringify(r.rejected.issues)}`)
  return r.pack
}

let acme: LoadedPack
let brief: LoadedPack
const cache = new PackIndexCache()
beforeAll(async () => {
  acme = await pack(join(STANDARD, 'acme-widget'))
  brief = await pack(join(PROJECT_PACKS, 'acme-product-brief'))
})

describe('6. the wrapper keeps trust, mode, selected paths and warnings; grounding in the standard words', () => {
  it('writes trust, mode= and runtime_mode=, selected_files and warning codes', async () => {
    const r = await resolveContext({ task: 'Battery life and waterproof IP67 rating of the widget?', packs: [brief], budget: 4000, cache })
    const open = r.context.slice(0, r.context.indexOf('>') + 1)
    expect(open).toMatch(
      /^<knowledge_pack name="acme-product-brief" status="ready" trust="user-confirmed" grounding="required" mode="data" profile="document-first" runtime_mode="data" selected_files="[^"]+" warnings="[^"]+">$/,
    )
    const files = /selected_files="([^"]+)"/.exec(open)?.[1]?.split(',') ?? []
    expect(files.sort()).toEqual([...(r.packs[0]?.selected_files ?? [])].sort())
    const warnings = /warnings="([^"]+)"/.exec(open)?.[1]?.split(',') ?? []
    expect(warnings).toEqual(expect.arrayContaining(['claim_stale', 'claim_disputed']))
  })

  it('grounding none (off accepted as input) drops anchors and is written as none', async () => {
    for (const grounding of ['none', 'off'] as const) {
      const r = await resolveContext({ task: 'What does the Team plan cost?', packs: [acme], grounding, cache })
      expect(r.packs[0]?.grounding).toBe('none')
      expect(r.context).toContain('grounding="none"')
      expect(r.context).not.toContain('grounding="off"')
    }
  })
})

describe('13. catalog fields', () => {
  it('keeps frontmatter scope, compatibility and updated, and producedBy.kind as written', () => {
    expect(acme.item).toMatchObject({
      declaredScope: 'workspace',
      compatibility: 'Reads compiled/splits/ and documents/; no scripts.',
      updated: '2026-05-01',
      scope: 'project',
      metadata: { producedBy: { kind: 'agent-skill', name: 'brand-product-knowledge-builder' } },
    })
    expect(acme.issues.filter((i) => i.field === 'metadata.producedBy.kind')).toEqual([])
    const xml = renderCatalog([acme.item]) ?? ''
    expect(xml).toContain('<scope>workspace</scope>')
    expect(xml).toContain('<compatibility>Reads compiled/splits/ and documents/; no scripts.</compatibility>')
  })
})
