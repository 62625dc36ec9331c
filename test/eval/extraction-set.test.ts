/**
 * The labelled extraction set (bench/data/extraction/, issue 43) and its judging rule
 * (bench/llm-judge.ts): the set is what its README says, and the rule scores what a hub holds
 * as the README says.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ExtractionCase, judgeCase, mentions, type JudgedEntry } from '../../bench/llm-judge.js'
import { hasCjk } from '../../src/core/text/index.js'
import { findSecrets } from '../../src/llm/secrets.js'

const read = (lang: string): ExtractionCase[] =>
  readFileSync(new URL(`../../bench/data/extraction/${lang}.jsonl`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => ExtractionCase.parse(JSON.parse(line)))

describe('the labelled extraction set', () => {
  const sets = { en: read('en'), zh: read('zh') }

  it('has at least 40 conversations, 20 a language, every kind in each, ids unique', () => {
    const all = [...sets.en, ...sets.zh]
    expect(all.length).toBeGreaterThanOrEqual(40)
    expect(new Set(all.map((c) => c.id)).size).toBe(all.length)
    for (const [lang, cases] of Object.entries(sets)) {
      expect(cases.length).toBeGreaterThanOrEqual(20)
      expect(cases.every((c) => c.lang === lang && c.id.startsWith(`${lang}-`))).toBe(true)
      expect(new Set(cases.map((c) => c.kind))).toEqual(new Set(['facts', 'chitchat', 'secret', 'guess', 'contradiction']))
    }
  })

  it('writes the Chinese conversations in Chinese', () => {
    for (const c of sets.zh) expect(hasCjk(c.messages.map((m) => m.content).join(''))).toBe(true)
  })

  it('labels facts the conversation states, and secrets the detector finds', async () => {
    for (const c of [...sets.en, ...sets.zh]) {
      const text = c.messages.map((m) => m.content).join('\n')
      for (const fact of c.facts) for (const term of fact.all) expect({ id: c.id, term, found: mentions(text, term) }).toMatchObject({ found: true })
      if (c.kind === 'secret') {
        const found = (await findSecrets(text)).map((f) => f.value)
        for (const f of c.forbidden) expect({ id: c.id, secret: found.some((v) => v.includes(f.all[0]!)) }).toEqual({ id: c.id, secret: true })
      }
      if (c.kind === 'chitchat' || c.kind === 'guess') expect(c.forbidden.length).toBeGreaterThan(0)
      if (c.kind === 'contradiction') expect({ existing: c.existing?.length, new: c.contradiction?.new.length }).toEqual({ existing: 1, new: 1 })
    }
  })
})

describe('the judging rule', () => {
  it('matches Latin terms as whole words, Chinese as text, either of a|b', () => {
    expect(mentions('We write Go services', 'go')).toBe(true)
    expect(mentions('We are going home', 'go')).toBe(false)
    expect(mentions('Releases are pushed when the page is rate limited', 'release')).toBe(true)
    expect(mentions('Releases are pushed when the page is rate limited', 'rate limit')).toBe(true)
    expect(mentions('Deploys to Fly.io daily', 'fly.io')).toBe(true)
    expect(mentions('standup at 10:00', '10:00')).toBe(true)
    expect(mentions('standup at 110:00', '10:00')).toBe(false)
    expect(mentions('团队的代码托管在 Gitea 上', 'gitlab|gitea')).toBe(true)
    expect(mentions('只用境内的云服务', '境外')).toBe(false)
  })

  const labelled = ExtractionCase.parse({
    id: 'en-contra-ci',
    lang: 'en',
    kind: 'contradiction',
    messages: [{ id: 'm1', role: 'user', content: 'We moved CI from Jenkins to GitHub Actions last week. Nice weather, by the way.' }],
    facts: [{ id: 'f1', all: ['github actions'] }],
    forbidden: [{ id: 'x1', all: ['weather'] }],
    existing: [{ types: ['tool'], task: 'CI system of the team', content: 'The team runs CI on Jenkins.' }],
    contradiction: { new: ['github actions'] },
  })
  const old: JudgedEntry = {
    id: 'k-old',
    task: 'CI system of the team',
    content: 'The team runs CI on Jenkins.',
    current: true,
    seeded: 'The team runs CI on Jenkins.',
  }

  it('scores a superseded old state, a recovered fact and a grounded entry', async () => {
    const entries: JudgedEntry[] = [
      { ...old, current: false },
      { id: 'k-new', task: 'CI system', content: 'The team moved CI from Jenkins to GitHub Actions.', current: true },
    ]
    expect(await judgeCase(labelled, entries)).toEqual({
      saved: 1,
      factsRecovered: 1,
      facts: 1,
      forbiddenSaved: [],
      secretsSaved: [],
      contradictionApplied: true,
      ungrounded: [],
    })
  })

  it('does not count a contradiction while the old state is current, and counts what is forbidden or ungrounded', async () => {
    const entries: JudgedEntry[] = [
      old,
      { id: 'k-new', task: 'CI system', content: 'The team runs CI on GitHub Actions with 12 runners.', current: true },
      { id: 'k-chat', task: 'Small talk', content: 'Nice weather.', current: false },
    ]
    const score = await judgeCase(labelled, entries)
    expect(score).toMatchObject({ contradictionApplied: false, factsRecovered: 1, forbiddenSaved: ['x1'], ungrounded: ['k-new'] })
    expect(score.saved).toBe(1)
  })

  it('counts an old state updated in place to the new one as applied, and judges its text against the old one too', async () => {
    const updated: JudgedEntry = { ...old, content: 'The team runs CI on GitHub Actions, no longer on Jenkins.' }
    expect(await judgeCase(labelled, [updated])).toMatchObject({ contradictionApplied: true, saved: 1, ungrounded: [] })
  })
})
