/**
 * The resolver's parts (intent, plan, rank, budget, audit, missing), pack
 * selection and the packs service, each called on its own over the fixture packs.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { countTokens } from '../../src/core/text/token-count.js'
import { createPackService, discoverPacks, PackIndexCache, type LoadedPack } from '../../src/packs/index.js'
import { queryTerms } from '../../src/packs/pack-index/lexical.js'
import { audit, unwrappedPacks } from '../../src/packs/resolve/audit.js'
import { estimateTokens, fillBudget, fitExactly, omissions, renderPiece } from '../../src/packs/resolve/budget.js'
import { detectIntent, isEvidenceIntent } from '../../src/packs/resolve/intent.js'
import { missingFacts } from '../../src/packs/resolve/missing.js'
import { planPack, profileTiers } from '../../src/packs/resolve/plan.js'
import { rankCandidates } from '../../src/packs/resolve/rank.js'
import { taskConcepts } from '../../src/packs/resolve/terms.js'
import { matchPacks, packByName, selectPacks } from '../../src/packs/catalog/select.js'
import { PROJECT_PACKS, SCOPES, VALIDATION, knowledge, pack, tempDir, writeTree } from './helpers.js'

describe('resolver parts', () => {
  let acme: LoadedPack
  let wiki: LoadedPack
  const cache = new PackIndexCache()
  beforeAll(async () => {
    acme = await pack(join(PROJECT_PACKS, 'acme-product-brief'))
    wiki = await pack(join(PROJECT_PACKS, 'shared-glossary'))
  })

  it('intent: detected from the text; the evidence intents unlock sources/', () => {
    expect(detectIntent('Verify the Q1 revenue claim')).toBe('verify')
    expect(detectIntent('Compare the Team and Enterprise plans')).toBe('detail')
    expect(detectIntent('What does the Team plan cost?')).toBe('answer')
    expect(['answer', 'detail', 'cite', 'verify', 'ingest', 'dispute'].filter((i) => isEvidenceIntent(i as never))).toEqual([
      'cite',
      'verify',
      'ingest',
      'dispute',
    ])
  })

  it('plan: the profile picks the preferred views; sources/ are candidates only for evidence intents', async () => {
    const index = await cache.get(acme)
    const tiers = profileTiers(acme, index, 'answer')
    expect(tiers.preferredReason).toBe('runtime')
    expect(tiers.forceFallback).toBe(false)
    expect(index.sections.filter(tiers.preferred).every((s) => s.kind === 'runtime')).toBe(true)
    const terms = queryTerms('What does the Team plan cost?')
    const answer = planPack(acme, 0, index, terms, taskConcepts(terms), 'answer', 'recommended')
    expect(answer.candidates.length).toBeGreaterThan(0)
    expect(answer.candidates.some((c) => c.section.kind === 'source')).toBe(false)
    expect(answer.candidates.filter((c) => c.reason === 'core').map((c) => c.section.path)).toContain('compiled/facts.md')
    const citeTerms = queryTerms('Cite the source of the Team plan price')
    const cite = planPack(acme, 0, index, citeTerms, taskConcepts(citeTerms), 'cite', 'recommended')
    expect(cite.candidates.some((c) => c.reason === 'evidence' && c.section.kind === 'source')).toBe(true)
  })

  it('rank, budget and audit: the fill stays within the budget, memoises counts in the index, and every candidate is selected or omitted', async () => {
    const terms = queryTerms('team plan price glossary')
    const plans = [acme, wiki].map(async (p, i) => planPack(p, i, await cache.get(p), terms, taskConcepts(terms), 'detail', 'recommended'))
    const ready = await Promise.all(plans)
    const ranked = rankCandidates(ready)
    expect(ranked.map((c) => c.group)).toEqual([...ranked.map((c) => c.group)].sort((a, b) => a - b))
    const budget = 600
    const fill = fillBudget(ranked, ready, budget)
    const memo = ready[0]!.index.tokenCounts.size
    expect(memo).toBeGreaterThan(0)
    const { built, tokens } = fitExactly(ready, fill.chosen, ranked, budget)
    expect(tokens).toBe(countTokens(built.context))
    expect(tokens).toBeLessThanOrEqual(budget)
    const omitted = omissions(ranked, ready, fill)
    const chosen = fill.chosen.flat().length
    expect(chosen + omitted.all.length).toBe(ranked.length)
    expect(Object.values(omitted.reasons).reduce((a, b) => a + (b ?? 0), 0)).toBe(omitted.all.length)
    const resolution = audit(ready[0]!, fill.chosen[0] ?? [], 0, tokens)
    expect(resolution.selected_files).toEqual([...new Set((fill.chosen[0] ?? []).map((c) => c.candidate.section.path))])
    expect(
      unwrappedPacks(ready, fill, omitted, budget).every((e) => (fill.chosen[ready.findIndex((p) => p.pack.item.name === e.pack)] ?? []).length === 0),
    ).toBe(true)
    // A second fill over the same indexes tokenises nothing new.
    fillBudget(ranked, ready, budget)
    expect(ready[0]!.index.tokenCounts.size).toBe(memo)
  })

  it('budget: the estimate errs low against the real count over a pack, and for Chinese', async () => {
    const index = await cache.get(acme)
    const texts = index.sections.map(renderPiece)
    const estimated = texts.reduce((sum, t) => sum + estimateTokens(t), 0)
    const counted = texts.reduce((sum, t) => sum + countTokens(t), 0)
    expect(estimated).toBeLessThan(counted)
    expect(estimated).toBeGreaterThan(counted / 2)
    const zh = '企业版的价格是每月每个用户二十九美元，包含单点登录和审计日志。'
    expect(estimateTokens(zh)).toBeLessThanOrEqual(countTokens(zh))
  })

  it('missing: task phrases no pack covers, in task order', async () => {
    const task = 'What is the quantum teleportation warranty?'
    const terms = queryTerms(task)
    const plan = planPack(wiki, 0, await cache.get(wiki), terms, taskConcepts(terms), 'answer', 'recommended')
    expect(missingFacts(task, [plan], [[]], [])).toEqual(['quantum teleportation warranty'])
  })
})

describe('pack selection', () => {
  it('by name (archived too; one not_found that says why a rejected pack is missing), else by task', async () => {
    const found = await discoverPacks({ extraPaths: [join(VALIDATION, 'archived-pack'), join(VALIDATION, 'missing-description')] })
    expect(found.archived.map((p) => p.item.name)).toEqual(['archived-pack'])
    expect(packByName(found, 'archived-pack').item.status).toBe('archived')
    const rejectedName = found.rejected[0]?.name
    expect(rejectedName).toBeDefined()
    const error = (() => {
      try {
        packByName(found, rejectedName as string)
      } catch (e) {
        return e
      }
    })()
    expect(isKnowHubError(error, 'not_found')).toBe(true)
    expect((error as Error).message).toContain('it did not load')
    expect(() => packByName({ packs: found.packs }, 'archived-pack')).toThrow(/No knowledge pack named "archived-pack"$/)

    const scoped = await discoverPacks({ projectDir: join(SCOPES, 'project') })
    const byTask = selectPacks(scoped, { task: 'What does the Acme product cost?' })
    expect(byTask.map((p) => p.item.name)).toEqual(matchPacks('What does the Acme product cost?', scoped.packs).map((p) => p.item.name))
    expect(byTask[0]?.item.name).toBe('acme-product-brief')
    expect(selectPacks(scoped, { names: [], task: 'What does the Acme product cost?' })).toEqual(byTask)
    expect(selectPacks(scoped, { names: ['shared-glossary'], task: 'What does the Acme product cost?' }).map((p) => p.item.name)).toEqual(['shared-glossary'])
  })
})

describe('packs service', () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir())
    await writeTree(dir, {
      '.agents/knowledge/zh-notes/KNOWLEDGE.md': knowledge({ name: 'zh-notes', language: 'zh-CN' }),
      '.agents/knowledge/zh-notes/wiki/intro.md': '# 介绍\n\n知识包。',
      '.agents/knowledge/en-notes/KNOWLEDGE.md': knowledge({ name: 'en-notes', description: 'Notes about invoices.' }),
      '.agents/knowledge/en-notes/wiki/invoices.md': '# Invoices\n\nInvoices are sent monthly.',
      'outside.md': 'secret',
    })
  })
  afterAll(async () => cleanup())

  it('discovers on first use and answers catalog, show, resolve, readFile and doctor from one discovery', async () => {
    const packs = createPackService({ discovery: { projectDir: dir } })
    expect(packs.available()).toEqual([])
    const catalog = await packs.catalog({ language: 'auto' })
    expect(catalog.items.map((i) => i.name).sort()).toEqual(['en-notes', 'zh-notes'])
    expect(catalog.language).toBe('zh')
    expect(catalog.xml).toContain('<available_knowledge_packs>')
    expect(
      packs
        .available()
        .map((p) => p.item.name)
        .sort(),
    ).toEqual(['en-notes', 'zh-notes'])
    expect((await packs.show('en-notes')).resources.map((r) => r.path)).toEqual(['wiki/invoices.md'])

    const { selected, result } = await packs.resolve({ task: 'When are invoices sent?', budget: 2000 })
    expect(selected).toEqual(['en-notes'])
    expect(result.context).toContain('Invoices are sent monthly.')
    const none = await packs.resolve({ task: 'zzz qqq', budget: 2000 })
    expect(none.selected).toEqual([])
    expect(none.result.context).toBe('')

    const file = await packs.readFile('en-notes', 'wiki/invoices.md')
    expect(file.text.startsWith('<knowledge_pack name="en-notes"')).toBe(true)
    expect((await packs.readFile('en-notes', 'KNOWLEDGE.md')).text.startsWith('<knowledge_pack_guide name="en-notes"')).toBe(true)
    await expect(packs.readFile('en-notes', '../../outside.md')).rejects.toMatchObject({ code: 'forbidden' })
    await expect(packs.readFile('en-notes', 'wiki/none.md')).rejects.toMatchObject({ code: 'not_found' })
    await expect(packs.activate('no-such-pack')).rejects.toMatchObject({ code: 'not_found' })

    const doctor = await packs.doctor()
    expect(doctor.packs.map((p) => p.name).sort()).toEqual(['en-notes', 'zh-notes'])
    expect(doctor.locations.some((l) => l.exists)).toBe(true)
  })

  it('over a fixed set: no discovery, the set as given; usage records written when a log is set', async () => {
    const found = await discoverPacks({ projectDir: dir })
    const logs = join(dir, 'logs')
    const packs = createPackService({ packs: found.packs.filter((p) => p.item.name === 'en-notes'), usageLog: { dir: logs } })
    expect(packs.available().map((p) => p.item.name)).toEqual(['en-notes'])
    expect((await packs.discover()).packs.map((p) => p.item.name)).toEqual(['en-notes'])
    await expect(packs.show('zh-notes')).rejects.toMatchObject({ code: 'not_found' })
    await packs.resolve({ task: 'invoices', packs: ['en-notes'] })
    const { readFile } = await import('node:fs/promises')
    const lines = (await readFile(join(logs, 'knowledge-usage.jsonl'), 'utf8')).trim().split('\n')
    expect(lines.map((l) => (JSON.parse(l) as { pack: string }).pack)).toEqual(['en-notes'])
  })
})
