/**
 * The resolver finds the fact (issue #16, defects 1–5), on fixture packs
 * written after the standard's documented examples (test/fixtures/packs/standard/):
 * fact-level fallback, context-map paths in Chinese text, missing facts that
 * are facts, persona preference without duplicates, a shared budget.
 */
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { PackIndexCache, resolveContext, validatePath, type LoadedPack } from '../../src/packs/index.js'
import { contextMapPaths } from '../../src/packs/resolve/plan.js'
import { PROJECT_PACKS, STANDARD, pack } from './helpers.js'

let acme: LoadedPack
let mara: LoadedPack
let supportZh: LoadedPack
let founder: LoadedPack
let brief: LoadedPack
const cache = new PackIndexCache()
beforeAll(async () => {
  acme = await pack(join(STANDARD, 'acme-widget'))
  mara = await pack(join(STANDARD, 'mara-persona'))
  supportZh = await pack(join(STANDARD, 'support-ops-zh'))
  founder = await pack(join(PROJECT_PACKS, 'founder-persona'))
  brief = await pack(join(PROJECT_PACKS, 'acme-product-brief'))
})

describe('1. fact-level fallback', () => {
  it('"What does the Team plan cost?" gets the Pricing section of the primary document at 200, 400 and 8,000 tokens', async () => {
    for (const budget of [200, 400, 8000]) {
      const r = await resolveContext({ task: 'What does the Team plan cost?', packs: [acme], budget, cache })
      expect(r.context, `budget ${budget}`).toContain('Team: 18 USD per seat per month')
      const p = r.packs[0]
      expect(p?.pieces[0]).toMatchObject({ path: 'documents/acme-widget.md', heading: 'Pricing', reason: 'fallback' })
      expect(p?.selected_documents).toContain('documents/acme-widget.md')
      expect(p?.decision).toMatchObject({ fallback: 'facts' })
      expect(p?.decision.fallback_coverage).toBeGreaterThan(p?.decision.preferred_coverage ?? 1)
      expect(p?.compile_warnings).toContainEqual(expect.objectContaining({ code: 'fallback_used', severity: 'info', path: 'documents/acme-widget.md' }))
      expect(r.missing).toEqual([])
    }
  })

  it('keeps to the runtime views when they answer the task, and names what was dropped when the fact does not fit', async () => {
    const battery = await resolveContext({ task: 'How long does the battery last?', packs: [acme], budget: 8000, cache })
    expect(battery.packs[0]?.decision.fallback).toBe('none')
    expect(battery.packs[0]?.selected_files).not.toContain('documents/acme-widget.md')
    expect(battery.context).toContain('14 days per charge')

    // At 150 tokens the wrapper (with its selected paths) leaves too little for the Pricing section: it is named as dropped, and missing.
    const tiny = await resolveContext({ task: 'What does the Team plan cost?', packs: [acme], budget: 150, cache })
    expect(tiny.context).not.toContain('18 USD')
    expect(tiny.omitted).toContainEqual(
      expect.objectContaining({ path: 'documents/acme-widget.md', heading: 'Acme Widget product brief › Pricing', reason: 'budget' }),
    )
    expect(tiny.omitted_count).toBeGreaterThan(0)
  })
})

describe('2. context-map paths in Chinese text', () => {
  it('reads paths as paths: full-width punctuation and CJK text end them', () => {
    expect(contextMapPaths('退款规则见 documents/refund.md；升级流程见wiki/escalation.md。服务时间以 `compiled/hours.md`为准')).toEqual([
      'documents/refund.md',
      'wiki/escalation.md',
      'compiled/hours.md',
    ])
    expect(contextMapPaths('See (wiki/a.md), [b](documents/b.md#top), "wiki/c.md", wiki/d.md. And wiki/e.md,wiki/f.md')).toEqual([
      'wiki/a.md',
      'documents/b.md',
      'wiki/c.md',
      'wiki/d.md',
      'wiki/e.md',
      'wiki/f.md',
    ])
    expect(contextMapPaths('见 wiki/退款/规则.md）')).toEqual(['wiki/退款/规则.md'])
  })

  it('a hybrid pack with a Chinese context map: no false path_missing, the map is used', async () => {
    const [report] = await validatePath(join(STANDARD, 'support-ops-zh'))
    expect(report?.issues.filter((i) => i.code === 'path_missing')).toEqual([])
    const r = await resolveContext({ task: '退款多久到账？', packs: [supportZh], budget: 800, cache })
    const p = r.packs[0]
    expect(p?.pieces[0]).toMatchObject({ path: 'documents/refund.md', reason: 'context-map' })
    expect(p?.compile_warnings.map((w) => w.code)).not.toContain('context_map_missing')
  })
})

describe('3. missing lists facts, not task words', () => {
  it('drops request verbs, question and meta words in English and Chinese, and says how it decided', async () => {
    const en = await resolveContext({ task: 'Cite the source mentioning the Team plan price and compare it with Enterprise', packs: [acme], cache })
    for (const word of ['cite', 'source', 'mentioning', 'compare']) expect(en.missing.join(' ')).not.toContain(word)
    expect(en.missing).toEqual([])
    const zh = await resolveContext({ task: '团队版多少钱？请介绍一下要求', packs: [acme], cache })
    for (const word of ['多少钱', '介绍', '要求', '一下']) expect(zh.missing.join(' ')).not.toContain(word)
    expect(zh.missing).toEqual(['团队'])
    expect(zh.missing_basis).toMatch(/request verbs, question words/)
  })

  it('still reports a fact no pack has, and an unnamed attribute the context does not support', async () => {
    const r = await resolveContext({ task: 'What is the warranty for the quantum flux capacitor?', packs: [brief], cache })
    expect(r.missing).toContain('quantum flux capacitor')
    expect(r.missing).not.toContain('warranty')
  })
})

describe('4. persona preference', () => {
  it('a generic persona task gets voice, values, taboos and the usage guide, and never the same text twice', async () => {
    const r = await resolveContext({ task: 'Write a short LinkedIn post as Mara', packs: [mara], budget: 400, cache })
    const pieces = r.packs[0]?.pieces ?? []
    expect(pieces.map((p) => p.heading)).toEqual(['Voice', 'Values', 'Taboos', 'Usage guide'])
    expect(pieces.every((p) => p.reason === 'persona')).toBe(true)
    // The voice comes from its split; the document section it was cut from is not a second candidate.
    expect(pieces[0]?.path).toBe('compiled/splits/mara/voice.md')
    expect(r.context.split('Plain and warm.').length).toBe(2)
    const all = await resolveContext({ task: 'Mara facts and voice', packs: [mara], budget: 8000, cache })
    expect(all.context.split('Founded Acme in 2019').length).toBe(2)
    expect(all.context.split('Plain and warm.').length).toBe(2)
  })
})

describe('5. budget sharing between persona and data packs', () => {
  it('persona first, the data pack guaranteed its share; the share is configurable', async () => {
    const task = "Draft a post in Mara's voice about the widget battery life"
    const shared = await resolveContext({ task, packs: [founder, brief], budget: 400, cache })
    expect(shared.wrapper_order).toEqual(['founder-persona', 'acme-product-brief'])
    expect(shared.tokens).toBeLessThanOrEqual(400)
    const data = shared.packs.find((p) => p.pack === 'acme-product-brief')
    expect(data?.tokens).toBeGreaterThan(100)
    expect(shared.context).toContain('Battery')

    const greedy = await resolveContext({ task, packs: [founder, brief], budget: 400, shares: { persona: 1 }, cache })
    const personaTokens = (r: typeof shared): number => r.packs.find((p) => p.pack === 'founder-persona')?.tokens ?? 0
    expect(personaTokens(greedy)).toBeGreaterThan(personaTokens(shared))
  })
})
