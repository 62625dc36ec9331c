/**
 * The contradiction set (bench/data/contradictions, issue 31): well-formed, big enough, in both
 * languages and every domain; a broken case is reported with its line and problem; and the
 * scripted model answers the extraction requests as the README says.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  CONTRADICTION_DOMAINS,
  CONTRADICTIONS_DIR,
  caseProblems,
  caseSessions,
  loadContradictions,
  scriptedModel,
  sessionFacts,
  type ContradictionCase,
} from '../../bench/contradictions-set.js'
import { decideMessages, proposeMessages } from '../../src/knowledge/extract/prompt.js'

const en = loadContradictions('en')
const zh = loadContradictions('zh')

describe('the contradiction set', () => {
  it('has at least 60 cases, 32 a language, every domain four times in each', () => {
    expect(en.length + zh.length).toBeGreaterThanOrEqual(60)
    for (const cases of [en, zh]) {
      expect(cases).toHaveLength(32)
      for (const domain of CONTRADICTION_DOMAINS)
        expect(
          cases.filter((c) => c.domain === domain),
          domain,
        ).toHaveLength(4)
    }
    expect(new Set([...en, ...zh].map((c) => c.id)).size).toBe(64)
  })

  it('writes the Chinese cases in Chinese and the English ones without CJK', () => {
    const cjk = /[\u4e00-\u9fff]/u
    for (const c of zh) for (const m of c.messages.filter((m) => m.role === 'user')) expect(cjk.test(m.content), c.id).toBe(true)
    for (const c of en) expect(cjk.test(JSON.stringify(c)), c.id).toBe(false)
  })

  it('states each old fact in an earlier session than the fact that replaces it', () => {
    for (const c of [...en, ...zh]) {
      const sessions = caseSessions(c)
      const at = (id: string) => sessions.findIndex((s) => sessionFacts(c, s).some((f) => f.id === id))
      expect(at(c.now.stale), c.id).toBeGreaterThanOrEqual(0)
      expect(at(c.now.expect), c.id).toBeGreaterThan(at(c.now.stale))
    }
  })

  it('reports every problem of a broken case with its line', () => {
    const good = en[0]!
    const broken: ContradictionCase = {
      ...good,
      facts: good.facts.map((f) => (f.id === 'new' ? { ...f, message_ids: ['m9'] } : f)),
      before: { ...good.before, as_of: '2026-01-01' },
    }
    expect(caseProblems(broken)).toEqual(['fact new names unknown message m9'])
    const late = { ...good, before: { ...good.before, as_of: '2026-01-01' } }
    expect(caseProblems(late)).toEqual([expect.stringContaining('as_of 2026-01-01 is not between')])
    const dated = { ...good, now: { ...good.now, q: 'Which CI system did the team use in March 2025?' } }
    expect(caseProblems(dated)).toEqual([expect.stringContaining('question names a date')])
    const dir = mkdtempSync(join(tmpdir(), 'contradictions-'))
    const lines = readFileSync(join(CONTRADICTIONS_DIR, 'en.jsonl'), 'utf8').split('\n')
    lines[2] = JSON.stringify({ ...JSON.parse(lines[2]!), lang: 'de' })
    lines[4] = JSON.stringify(late)
    writeFileSync(join(dir, 'en.jsonl'), lines.join('\n'))
    expect(() => loadContradictions('en', dir)).toThrow(/en\.jsonl:3: lang: [^\n]*\n[^\n]*en\.jsonl:5 \(en-tools-ci\): as_of 2026-01-01/)
  })
})

describe('the scripted model', () => {
  const c = en[0]!
  const ask = (messages: ReturnType<typeof proposeMessages>) => ({ model: 'm', messages: messages.map((m) => ({ role: m.role, content: m.content })) })

  it('proposes the facts of the session it is shown', () => {
    const [first, second] = caseSessions(c)
    for (const mode of ['supersede', 'add-only'] as const) {
      const model = scriptedModel(() => c, mode)
      const shown = (session: typeof first) => session!.map((m) => ({ id: m.id, role: m.role, content: m.content }))
      const proposals = (session: typeof first) =>
        (JSON.parse(model(ask(proposeMessages(shown(session), 'English')))) as { entries: Array<{ content: string }> }).entries
      expect(proposals(first).map((e) => e.content)).toEqual(c.facts.filter((f) => f.id !== 'new').map((f) => f.content))
      expect(proposals(second).map((e) => e.content)).toEqual([c.facts.find((f) => f.id === 'new')!.content])
    }
  })

  it('supersedes the candidate holding the replaced fact, and adds when it was not shown or in the baseline', () => {
    const fact = (id: string) => c.facts.find((f) => f.id === id)!
    const proposal = { proposal: 0, types: fact('new').types, task: fact('new').task, content: fact('new').content }
    const candidates = [
      { id: 'knowledge-20250101000000-aaaa', types: ['tool'], task: fact('other').task, content: fact('other').content },
      { id: 'knowledge-20250101000000-bbbb', types: ['tool'], task: fact('old').task, content: fact('old').content },
    ]
    const decide = (mode: 'supersede' | 'add-only', shown: typeof candidates) =>
      JSON.parse(scriptedModel(() => c, mode)(ask(decideMessages([{ ...proposal, candidates: shown }])))) as { decisions: unknown[] }
    expect(decide('supersede', candidates).decisions).toEqual([{ proposal: 0, action: 'supersede', existing_id: 'knowledge-20250101000000-bbbb' }])
    expect(decide('supersede', candidates.slice(0, 1)).decisions).toEqual([{ proposal: 0, action: 'add', existing_id: null }])
    expect(decide('add-only', candidates).decisions).toEqual([{ proposal: 0, action: 'add', existing_id: null }])
  })
})
