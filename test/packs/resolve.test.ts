import { cp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { countTokens as referenceCount } from 'gpt-tokenizer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import type { Embedder } from '../../src/embed/embedder.js'
import { PackIndexCache, resolveContext, type LoadedPack } from '../../src/packs/index.js'
import { detectIntent } from '../../src/packs/resolve/intent.js'
import { splitMarkdown } from '../../src/packs/pack-index/sections.js'
import { FIXTURES, PROJECT_PACKS, VALIDATION, knowledge, pack, tempDir, writeTree } from './helpers.js'

let acme: LoadedPack
let persona: LoadedPack
let wiki: LoadedPack
let hybrid: LoadedPack
const cache = new PackIndexCache()
beforeAll(async () => {
  acme = await pack(join(PROJECT_PACKS, 'acme-product-brief'))
  persona = await pack(join(PROJECT_PACKS, 'founder-persona'))
  wiki = await pack(join(PROJECT_PACKS, 'research-wiki-zh'))
  hybrid = await pack(join(PROJECT_PACKS, 'hybrid-support-ops'))
})

describe('markdown sections', () => {
  it('splits by headings outside code fences, drops frontmatter and heading-only sections, cuts long sections', () => {
    const md = '---\ntitle: x\n---\n# Top\n\n## A\ntext a\n```\n# not a heading\n```\n## B\n' + 'para one.\n\n'.repeat(400)
    const sections = splitMarkdown(md, { maxChars: 1000 })
    expect(sections[0]).toMatchObject({ heading: 'A', headingPath: ['Top', 'A'], line: 6, part: 0 })
    expect(sections[0]?.text).toContain('# not a heading')
    const parts = sections.filter((s) => s.heading === 'B')
    expect(parts.length).toBeGreaterThan(3)
    expect(parts.every((p) => p.text.length <= 1000 && p.part > 0)).toBe(true)
  })
})

describe('resolver: profile branches', () => {
  it('document-first: compiled/splits/<doc>/ first, the primary document is not loaded', async () => {
    const r = await resolveContext({ task: 'What does the Team plan cost per month?', packs: [acme], cache })
    const p = r.packs[0]
    expect(p?.selected_files).toContain('compiled/splits/acme-product-brief/pricing.md')
    expect(p?.selected_files.some((f) => f.startsWith('documents/'))).toBe(false)
    expect(p?.selected_documents).toEqual(['documents/acme-product-brief.md'])
    expect(r.context).toContain('Team plan: 99 USD per month')
  })

  it('document-first without splits: only the relevant sections of the primary document', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await cp(join(PROJECT_PACKS, 'acme-product-brief'), join(dir, 'acme-product-brief'), { recursive: true })
      await rm(join(dir, 'acme-product-brief', 'compiled', 'splits'), { recursive: true })
      const copy = await pack(join(dir, 'acme-product-brief'))
      const r = await resolveContext({ task: 'What does the Team plan cost per month?', packs: [copy] })
      const p = r.packs[0]
      const fromDocument = p?.pieces.filter((piece) => piece.path === 'documents/acme-product-brief.md').map((piece) => piece.heading)
      expect(fromDocument).toContain('Pricing')
      expect(fromDocument).not.toContain('Support')
      expect(fromDocument).not.toContain('Compliance')
      expect(p?.compile_warnings).toContainEqual(expect.objectContaining({ code: 'splits_missing', severity: 'info' }))
    } finally {
      await cleanup()
    }
  })

  it('document-first fallback: sections of the primary document only, other documents/ files for detail tasks or without a primary', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'doc/KNOWLEDGE.md': knowledge({ name: 'doc', profile: 'document-first', trust: 'official' }, '# Doc\n').replace(
          'profile: document-first',
          'profile: document-first\nmetadata:\n  primaryDocument: documents/handbook.md',
        ),
        'doc/documents/handbook.md': '# Handbook\n\n## Forklift speed\n\nForklifts drive at most 10 km/h in the hall.\n\n## Lunch\n\nLunch is at noon.\n',
        'doc/documents/old-memo.md': '# Old memo\n\n## Forklift speed\n\nForklifts used to drive 15 km/h.\n',
        'doc/compiled/briefing.md': '# Briefing\n\nA site handbook.\n',
      })
      const doc = await pack(join(dir, 'doc'))
      const routine = await resolveContext({ task: 'What is the forklift speed limit?', packs: [doc], budget: 4000 })
      expect(routine.packs[0]?.selected_files).toContain('documents/handbook.md')
      expect(routine.packs[0]?.selected_files).not.toContain('documents/old-memo.md')
      expect(routine.packs[0]?.pieces.filter((p) => p.path === 'documents/handbook.md').map((p) => p.heading)).toEqual(['Forklift speed'])
      const detail = await resolveContext({ task: 'Compare the forklift speed rules in detail', packs: [doc], budget: 4000 })
      expect(detail.intent).toBe('detail')
      expect(detail.packs[0]?.selected_files).toEqual(expect.arrayContaining(['documents/handbook.md', 'documents/old-memo.md']))
    } finally {
      await cleanup()
    }
  })

  it('document-first without documents/: the resolver surfaces the gap', async () => {
    const gap = await pack(join(VALIDATION, 'document-first-gap'))
    const r = await resolveContext({ task: 'What is the product price?', packs: [gap] })
    expect(r.packs[0]?.compile_warnings).toContainEqual(expect.objectContaining({ code: 'document_first_gap', severity: 'warning' }))
    expect(r.packs[0]?.missing).toContain('primary document (metadata.primaryDocument)')
    expect(r.recommendation).toBe('ask_user_or_mark_unknown')
  })

  it('wiki-first: compiled/ for a common question, relevant wiki/ pages for detail or when compiled/ falls short', async () => {
    const common = await resolveContext({ task: '固态电池的能量密度是多少？', packs: [wiki], cache })
    expect(common.packs[0]?.selected_files).toEqual(['compiled/overview.md'])
    expect(common.context).toContain('每千克四百瓦时')

    const detail = await resolveContext({ task: '为什么硫化物电解质和氧化物电解质的界面不同？请详细比较', packs: [wiki], cache })
    expect(detail.intent).toBe('detail')
    expect(detail.packs[0]?.selected_files).toEqual(expect.arrayContaining(['wiki/sulfide-electrolyte.md', 'wiki/oxide-electrolyte.md']))
    expect(detail.packs[0]?.selected_files).not.toContain('wiki/market.md')

    const specific = await resolveContext({ task: '硫化物电解质对水分敏感吗', packs: [wiki], cache })
    expect(specific.packs[0]?.selected_files).toContain('wiki/sulfide-electrolyte.md')
    expect(specific.packs[0]?.selected_files).not.toContain('wiki/oxide-electrolyte.md')
  })

  it('hybrid: the path the context map names first, then relevant pieces — never the whole pack', async () => {
    const r = await resolveContext({ task: 'How fast must a severity 1 ticket be escalated to the on-call engineer?', packs: [hybrid], cache })
    const p = r.packs[0]
    expect(p?.pieces.find((piece) => piece.path === 'wiki/escalation.md')?.reason).toBe('context-map')
    expect(p?.selected_files).not.toContain('wiki/refund-policy.md')
    expect(p?.compile_warnings).toContainEqual(expect.objectContaining({ code: 'stale', path: 'KNOWLEDGE.md' }))
  })
})

describe('resolver: runtime modes, evidence and warnings', () => {
  it('persona: the persona wrapper comes first, voice/values/taboos before facts', async () => {
    const r = await resolveContext({ task: "Draft a post in Mara's voice about the widget battery life", packs: [acme, persona], cache })
    expect(r.wrapper_order).toEqual(['founder-persona', 'acme-product-brief'])
    expect(
      r.context.startsWith(
        '<knowledge_pack name="founder-persona" status="ready" trust="official" grounding="recommended" mode="persona" profile="document-first" runtime_mode="persona" selected_files="',
      ),
    ).toBe(true)
    expect(r.context).toContain('<knowledge_pack name="acme-product-brief"')
    const pieces = r.packs.find((p) => p.pack === 'founder-persona')?.pieces ?? []
    const personaPaths = pieces.filter((p) => p.reason === 'persona').map((p) => p.path)
    expect(personaPaths).toEqual(
      expect.arrayContaining(['compiled/splits/founder-voice/voice.md', 'compiled/splits/founder-voice/values.md', 'compiled/splits/founder-voice/taboos.md']),
    )
    const firstFact = pieces.findIndex((p) => p.reason !== 'persona')
    const lastPersona = pieces.map((p) => p.reason).lastIndexOf('persona')
    expect(firstFact === -1 || lastPersona < firstFact).toBe(true)
    expect(r.packs.find((p) => p.pack === 'founder-persona')?.wrapper_order).toBe(0)
  })

  it('sources/ only for citation, verification, ingest or dispute tasks; indexes/ and runs/ never as content', async () => {
    expect(detectIntent('Cite the source for the standard plan price')).toBe('cite')
    expect(detectIntent('Please verify the battery claim')).toBe('verify')
    expect(detectIntent('核实一下电池续航的来源')).toBe('verify')
    expect(detectIntent('What is the price?')).toBe('answer')
    const plain = await resolveContext({ task: 'What is the standard plan price?', packs: [acme], cache })
    const cite = await resolveContext({ task: 'Cite the source for the standard plan price', packs: [acme], cache })
    expect(plain.packs[0]?.selected_files.some((f) => f.startsWith('sources/'))).toBe(false)
    expect(cite.packs[0]?.selected_files).toContain('sources/pricing-sheet.md')
    for (const r of [plain, cite]) expect(r.packs[0]?.selected_files.some((f) => /^(indexes|runs)\//.test(f))).toBe(false)
    expect(plain.packs[0]?.source_anchors).toContain('sources/pricing-sheet.md#L3')
  })

  it('warns about stale, disputed, missing and unreviewed claims from indexes/source-map.json and about compile runs', async () => {
    const specs = await resolveContext({ task: 'Battery life and waterproof IP67 rating of the widget?', packs: [acme], cache })
    const codes = specs.packs[0]?.compile_warnings.map((w) => `${w.code}@${w.path}`) ?? []
    expect(codes).toContain('claim_stale@compiled/splits/acme-product-brief/specifications.md')
    expect(codes).toContain('claim_disputed@compiled/splits/acme-product-brief/specifications.md')

    const support = await resolveContext({ task: 'How long is the hardware warranty?', packs: [acme], cache })
    expect(support.packs[0]?.compile_warnings).toContainEqual(
      expect.objectContaining({ code: 'claim_unreviewed', severity: 'warning', path: 'compiled/splits/acme-product-brief/support.md' }),
    )

    const price = await resolveContext({ task: 'What is the enterprise price?', packs: [acme], cache })
    const warnings = price.packs[0]?.compile_warnings ?? []
    expect(warnings).toContainEqual(expect.objectContaining({ code: 'claim_missing', path: 'compiled/splits/acme-product-brief/pricing.md' }))
    expect(warnings).toContainEqual({
      severity: 'warning',
      path: 'compiled/splits/acme-product-brief/pricing.md',
      code: 'compile_run',
      message: 'This runtime view depends on a needs-review compile run (compile-2026-05-01).',
    })
    expect(price.missing).toEqual(expect.arrayContaining(['Approved enterprise price', 'Enterprise SLA']))
    expect(price.recommendation).toBe('ask_user_or_mark_unknown')

    const unreviewed = await resolveContext({ task: '固态电池的能量密度', packs: [wiki], cache })
    expect(unreviewed.packs[0]?.compile_warnings.map((w) => w.code)).toEqual(expect.arrayContaining(['needs_review', 'unreviewed']))
  })

  it('reports missing and refused sources found through the source map', async () => {
    const bad = await pack(join(VALIDATION, 'bad-source-map'))
    const r = await resolveContext({ task: 'summary', packs: [bad] })
    const codes = r.packs[0]?.compile_warnings.map((w) => w.code) ?? []
    expect(codes).toEqual(expect.arrayContaining(['source_missing', 'path_escape']))
    expect(r.packs[0]?.source_anchors).toEqual(['sources/real.md'])
  })

  it('reports facts no pack has as missing phrases, with the recommendation', async () => {
    const r = await resolveContext({ task: 'What is the warranty for the quantum flux capacitor?', packs: [acme], cache })
    expect(r.missing).toContain('quantum flux capacitor')
    expect(r.recommendation).toBe('ask_user_or_mark_unknown')
  })

  it('grounding policy: required lists citation gaps, off drops anchors', async () => {
    const required = await resolveContext({ task: 'What are the support hours?', packs: [hybrid], grounding: 'required', cache })
    expect(required.packs[0]?.grounding).toBe('required')
    expect(required.packs[0]?.citation_gaps.length).toBeGreaterThan(0)
    expect(required.context).toContain('grounding="required"')
    const off = await resolveContext({ task: 'What is the standard plan price?', packs: [acme], grounding: 'off', cache })
    expect(off.packs[0]?.source_anchors).toEqual([])
    expect(off.packs[0]?.citation_gaps).toEqual([])
  })

  it('a disputed pack is left out until confirmed', async () => {
    const disputed = await pack(join(VALIDATION, 'disputed-pack'))
    const refused = await resolveContext({ task: 'When is the launch date?', packs: [disputed] })
    expect(refused.context).toBe('')
    expect(refused.excluded).toEqual([expect.objectContaining({ pack: 'disputed-pack', code: 'confirmation_required' })])
    const confirmed = await resolveContext({ task: 'When is the launch date?', packs: [disputed], confirmed: ['disputed-pack'] })
    expect(confirmed.context).toContain('2026-09-01')
    expect(confirmed.packs[0]?.compile_warnings).toContainEqual(expect.objectContaining({ code: 'disputed' }))
  })
})

describe('resolver: token budget', () => {
  it('never exceeds the budget (counted with the real tokenizer) and reports what did not fit', async () => {
    const packs = [acme, persona, hybrid]
    let sawOmission = false
    for (const budget of [1, 20, 60, 100, 150, 220, 300, 450, 700, 1000, 2000, 8000]) {
      const r = await resolveContext({
        task: 'Write a reply about the Team plan price, support hours, escalation and battery life in Mara voice',
        packs,
        budget,
        cache,
      })
      const exact = referenceCount(r.context, { disallowedSpecial: new Set() })
      expect(r.tokens).toBe(exact)
      expect(exact, `budget ${budget}`).toBeLessThanOrEqual(budget)
      if (r.omitted_count > 0) {
        sawOmission = true
        expect(r.omitted[0]).toMatchObject({ reason: 'budget' })
      }
      const selectedTokens = r.packs.reduce((n, p) => n + p.tokens, 0)
      expect(selectedTokens).toBeLessThanOrEqual(budget)
    }
    expect(sawOmission).toBe(true)
  })

  it('lists every candidate left out with why — core views and 0-score persona pieces too — and reports a pack that got no wrapper', async () => {
    const task = "Draft a post in Mara's voice about the widget battery life"
    const everything = await resolveContext({ task, packs: [persona, acme], budget: 100_000 })
    expect(everything.omitted_count).toBe(0)
    const candidates = everything.packs.flatMap((p) => p.pieces.map((piece) => `${p.pack} ${piece.path} ${piece.line} ${piece.part}`))
    expect(candidates).toContain('acme-product-brief compiled/boundaries.md 1 0')

    // No sharing (persona share 1): the persona pack takes the small budget first.
    const small = await resolveContext({ task, packs: [persona, acme], budget: 150, shares: { persona: 1 } })
    expect(small.tokens).toBeLessThanOrEqual(150)
    expect(small.wrapper_order).toEqual(['founder-persona'])
    // Nothing of the data pack fit: it is reported, not silently dropped.
    expect(small.excluded).toEqual([expect.objectContaining({ pack: 'acme-product-brief', code: 'budget' })])
    // Selected plus omitted is every candidate.
    const selected = small.packs.reduce((n, p) => n + p.pieces.length, 0)
    expect(selected + small.omitted_count).toBe(candidates.length)
    expect(small.omitted).toHaveLength(small.omitted_count)
    const omitted = small.omitted.map((o) => `${o.pack} ${o.path}`)
    // Core views, including one no task term matches (score 0).
    expect(omitted).toEqual(
      expect.arrayContaining(['acme-product-brief compiled/briefing.md', 'acme-product-brief compiled/boundaries.md', 'acme-product-brief compiled/facts.md']),
    )
    expect(small.omitted).toContainEqual(
      expect.objectContaining({ pack: 'acme-product-brief', path: 'compiled/boundaries.md', role: 'core', score: 0, reason: 'budget' }),
    )
    expect(small.omitted.some((o) => o.pack === 'founder-persona' && o.role === 'persona')).toBe(true)
    expect(small.omitted_reasons).toEqual({ budget: small.omitted_count })
  })

  it('candidates after the count or miss limit are reported as never tried, not as over budget', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const tree: Record<string, string> = { 'many/KNOWLEDGE.md': knowledge({ name: 'many', profile: 'wiki-first' }) }
      for (let i = 0; i < 120; i++)
        tree[`many/compiled/note-${String(i).padStart(3, '0')}.md`] = `# Forklift note ${i}\n\nForklift rule ${i}: keep the forklift below ${i} km/h.\n`
      for (let i = 0; i < 60; i++)
        tree[`long/compiled/page-${String(i).padStart(3, '0')}.md`] =
          `# Forklift page ${i}\n\n${'The forklift manual says many words about loading docks. '.repeat(45)}\n`
      tree['long/KNOWLEDGE.md'] = knowledge({ name: 'long', profile: 'wiki-first' })
      await writeTree(dir, tree)

      // 120 small pieces, a large budget: 80 are counted and selected, the rest are never counted.
      const many = await resolveContext({ task: 'forklift rule', packs: [await pack(join(dir, 'many'))], budget: 100_000, cache: new PackIndexCache() })
      const selected = many.packs[0]?.pieces.length ?? 0
      expect(selected).toBeGreaterThan(0)
      expect(selected + many.omitted_count).toBe(120)
      expect(many.omitted_reasons.count_limit).toBe(many.omitted_count)
      expect(many.omitted.every((o) => o.reason === 'count_limit' && o.tokens === undefined)).toBe(true)

      // 60 pieces each far over a small budget: 40 misses in a row, then the rest are never tried.
      const long = await resolveContext({ task: 'forklift manual', packs: [await pack(join(dir, 'long'))], budget: 300, cache: new PackIndexCache() })
      expect(long.context).toBe('')
      expect(long.excluded).toEqual([expect.objectContaining({ pack: 'long', code: 'budget' })])
      expect(long.omitted_count).toBe(60)
      expect(long.omitted_reasons).toEqual({ budget: 40, miss_limit: 20 })
      expect(long.omitted.slice(40).every((o) => o.reason === 'miss_limit')).toBe(true)
    } finally {
      await cleanup()
    }
  })

  it('reports a selected pack no section of which matches the task', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'quiet/KNOWLEDGE.md': knowledge({ name: 'quiet', profile: 'wiki-first' }), 'quiet/wiki/cats.md': '# Cats\n\nCats sleep a lot.\n' })
      const r = await resolveContext({ task: 'forklift speed limit', packs: [await pack(join(dir, 'quiet'))], budget: 2000 })
      expect(r.context).toBe('')
      expect(r.excluded).toEqual([expect.objectContaining({ pack: 'quiet', code: 'no_match' })])
    } finally {
      await cleanup()
    }
  })

  it('cuts an oversized section into parts and reads oversized files only up to the limit', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const huge = `# Handbook\n\n${Array.from({ length: 4000 }, (_, i) => `Paragraph ${i} about forklift safety rule ${i}.\n`).join('\n')}\nEND-OF-FILE-MARKER forklift\n`
      await writeTree(dir, { 'big/KNOWLEDGE.md': knowledge({ name: 'big', profile: 'wiki-first' }), 'big/wiki/handbook.md': huge })
      const big = await pack(join(dir, 'big'))
      const small = new PackIndexCache({ maxFileBytes: 64 * 1024 })
      const r = await resolveContext({ task: 'forklift safety rule 12', packs: [big], budget: 1500, cache: small })
      expect(r.tokens).toBeLessThanOrEqual(1500)
      expect(r.context).not.toContain('END-OF-FILE-MARKER')
      expect(r.packs[0]?.compile_warnings).toContainEqual(expect.objectContaining({ code: 'file_too_large', path: 'wiki/handbook.md' }))
      expect(r.packs[0]?.pieces.every((p) => p.part > 0)).toBe(true)
      await writeFile(join(dir, 'big', 'wiki', 'handbook.md'), 'changed')
    } finally {
      await cleanup()
    }
  })
})

describe('resolver: relevance with an embedder', () => {
  let calls: Array<{ kind: string; texts: string[] }> = []
  const hashed = createHashedEmbedder({ dimension: 256 })
  const counting: Embedder = {
    model: hashed.model,
    dimension: hashed.dimension,
    embed: async (texts, options) => {
      calls.push({ kind: options.kind, texts: [...texts] })
      return hashed.embed(texts, options)
    },
  }
  afterAll(() => {
    calls = []
  })

  it('blends embedder similarity into lexical ranking and caches section vectors; the task is a query, the sections documents', async () => {
    const local = new PackIndexCache()
    const first = await resolveContext({ task: 'What does the Team plan cost?', packs: [acme], embedder: counting, cache: local })
    expect(first.packs[0]?.selected_files).toContain('compiled/splits/acme-product-brief/pricing.md')
    expect(calls.map((c) => c.kind)).toEqual(['query', 'document'])
    expect(calls[0]?.texts).toEqual(['What does the Team plan cost?'])
    expect(calls[1]?.texts.length).toBeGreaterThan(0)
    calls = []
    await resolveContext({ task: 'What does the Team plan cost?', packs: [acme], embedder: counting, cache: local })
    expect(calls).toEqual([{ kind: 'query', texts: ['What does the Team plan cost?'] }])
  })

  it('keeps working when the embedder fails', async () => {
    const failing: Embedder = { model: 'broken', dimension: 4, embed: async () => Promise.reject(new Error('down')) }
    const r = await resolveContext({ task: 'What does the Team plan cost?', packs: [acme], embedder: failing })
    expect(r.packs[0]?.selected_files).toContain('compiled/splits/acme-product-brief/pricing.md')
  })
})

describe('resolver: audit record shape', () => {
  it('has the fields of seed 001', async () => {
    const r = await resolveContext({ task: 'What is the standard plan price?', packs: [acme], cache })
    const p = r.packs[0]
    expect(Object.keys(p ?? {})).toEqual(expect.arrayContaining(['selected_documents', 'selected_files', 'source_anchors', 'compile_warnings', 'missing']))
    for (const w of p?.compile_warnings ?? []) {
      expect(['info', 'warning', 'error']).toContain(w.severity)
      expect(typeof w.path).toBe('string')
      expect(typeof w.message).toBe('string')
    }
    expect(JSON.parse(JSON.stringify(r))).toEqual(r)
  })

  it('resolves nothing for no packs and rejects an empty task', async () => {
    const r = await resolveContext({ task: 'anything', packs: [] })
    expect(r).toMatchObject({ context: '', tokens: 0, packs: [], wrapper_order: [] })
    await expect(resolveContext({ task: '', packs: [acme] })).rejects.toMatchObject({ code: 'validation_error' })
    void FIXTURES
  })
})
