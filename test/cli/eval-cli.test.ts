/**
 * `knowhub eval DIR`, run in-process through the real program: a tiny set written
 * to a temp dir, KnowHub's Chinese set (bench/data/zh-agent) with --limit, and the
 * errors for missing folders, missing files and malformed lines.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EvalReport } from '../../src/cli/commands/eval.js'
import { runCli } from '../helpers/cli.js'

const ZH_AGENT = resolve(import.meta.dirname, '..', '..', 'bench', 'data', 'zh-agent')
const SMALL_STORES = resolve(import.meta.dirname, '..', '..', 'bench', 'data', 'small-stores')

let dir: string
const run = runCli

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'

/** Writes a set folder; `files` overrides (or, with null, leaves out) single files. */
function writeSet(name: string, files: Partial<Record<'corpus.jsonl' | 'queries.jsonl' | 'qrels.jsonl', string | null>> = {}): string {
  const folder = join(dir, name)
  mkdirSync(folder, { recursive: true })
  const defaults = {
    'corpus.jsonl': jsonl([
      {
        id: 'sel',
        text: 'undetected_chromedriver avoids most bot checks; add random delays between steps',
        meta: { conv: 'crawl', task: 'Log in to site A with Selenium', types: ['tool', 'strategy'] },
      },
      {
        id: 'pw',
        text: 'Playwright waits for the /api/items response; raise the timeout to 60 s when paging',
        meta: { conv: 'crawl', task: 'Scrape the product list of site B' },
      },
      { id: 'proxy', text: 'Residential proxies have the best success rate but are billed per GB', meta: { conv: 'crawl' } },
      { id: 'ts', text: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', meta: { conv: 'user-1', task: '用户编码风格偏好', types: ['user_profile'] } },
      { id: 'pnpm', text: '个人项目一律使用 pnpm,不要生成 package-lock.json', meta: { conv: 'user-1', task: '包管理器偏好', types: ['user_profile'] } },
      { id: 'tz', text: '工作日 10:00-19:00 在线,周三下午固定开会', meta: { conv: 'user-1', task: '工作时间约束', types: ['user_profile'] } },
    ]),
    'queries.jsonl': jsonl([
      { id: 'q-easy', text: 'selenium login blocked as a bot', meta: { conv: 'crawl' } },
      { id: 'q-zh', text: '用户喜欢什么样的编码风格', meta: { conv: 'user-1' } },
      { id: 'q-pkg', text: '她的项目用哪个包管理工具', meta: { conv: 'user-1' } },
      { id: 'q-unjudged', text: 'nothing judged here', meta: { conv: 'crawl' } },
    ]),
    'qrels.jsonl': jsonl([
      { query_id: 'q-easy', doc_id: 'sel', relevance: 1 },
      { query_id: 'q-zh', doc_id: 'ts', relevance: 1 },
      { query_id: 'q-pkg', doc_id: 'pnpm', relevance: 1 },
    ]),
  }
  for (const [file, text] of Object.entries({ ...defaults, ...files })) if (text !== null) writeFileSync(join(folder, file), text)
  return folder
}

function expectMetricsInRange(report: EvalReport): void {
  for (const m of report.runs) {
    for (const key of ['recall@5', 'recall@10', 'ndcg@10', 'mrr@10'] as const) {
      expect(typeof m[key], key).toBe('number')
      expect(m[key], key).toBeGreaterThanOrEqual(0)
      expect(m[key], key).toBeLessThanOrEqual(1)
    }
    expect(m.latency_ms.p50).toBeGreaterThanOrEqual(0)
    expect(m.latency_ms.p95).toBeGreaterThanOrEqual(m.latency_ms.p50)
    expect(m.queries_per_second).toBeGreaterThan(0)
  }
}

describe('knowhub eval', () => {
  const saved = { ...process.env }
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-eval-cli-'))
    delete process.env.KNOWHUB_EMBEDDER
    delete process.env.DATABASE_URL
  })
  afterAll(() => {
    process.env = saved
    rmSync(dir, { recursive: true, force: true })
  })

  it('evaluates a tiny set: every mode as a table with progress on stderr; --json, --out, --limit, --per-query; known-easy queries found within their conv', async () => {
    const set = writeSet('tiny')
    const table = await run('eval', set, '--mode', 'all')
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain('tiny: 6 docs in 2 convs, 3 judged queries')
    expect(table.stdout).toMatch(/R@5\s+R@10\s+nDCG@10\s+MRR@10\s+p50 ms\s+p95 ms\s+q\/s/)
    for (const mode of ['hybrid', 'fulltext', 'vector']) expect(table.stdout).toMatch(new RegExp(`tiny\\s+${mode}\\s+yes\\s+3`))
    expect(table.stdout).toMatch(/tiny\s+hybrid\s+no\s+3/)
    expect(table.stderr).toMatch(/loading: 6\/6/)
    expect(table.stderr).toMatch(/querying fulltext: 3\/3/)

    // --json, --out, --no-rerank, --limit (the first N judged queries) and --per-query in one run
    const file = join(dir, 'report.json')
    const json = await run(
      'eval',
      set,
      '--json',
      '--out',
      file,
      '--mode',
      'fulltext',
      '--no-rerank',
      '--top-k',
      '10',
      '--limit',
      '2',
      '--per-query',
      '--embedder',
      'hashed',
    )
    expect(json.code, json.stderr).toBe(0)
    const report = JSON.parse(json.stdout) as EvalReport
    expect(report).toMatchObject({ set: 'tiny', docs: 6, convs: 2, judged_queries: 3 })
    expect(report.embedder).toMatch(/^hashed/)
    expect(report.runs).toHaveLength(1)
    expect(report.runs[0]).toMatchObject({ mode: 'fulltext', rerank: false, top_k: 10, queries: 2 })
    expectMetricsInRange(report)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(report)

    // the known-easy queries are found first, each only among its own conv's documents
    const perQuery = new Map((report.runs[0]?.per_query ?? []).map((q) => [q.id, q]))
    expect([...perQuery.keys()]).toEqual(['q-easy', 'q-zh'])
    expect(perQuery.get('q-easy')?.ranked[0]).toBe('sel')
    expect(perQuery.get('q-zh')?.ranked[0]).toBe('ts')
    expect(perQuery.get('q-easy')?.ranked).not.toContain('ts')
    expect(perQuery.get('q-zh')?.ranked.every((id) => ['ts', 'pnpm', 'tz'].includes(id))).toBe(true)
    expect(report.runs[0]).toMatchObject({ 'recall@10': 1, 'mrr@10': 1 })
  })

  it('runs on the zh-agent set with --limit', async () => {
    const result = await run('eval', ZH_AGENT, '--limit', '12', '--mode', 'fulltext', '--json', '--per-query', '--embedder', 'hashed')
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout) as EvalReport
    expect(report.docs).toBeGreaterThanOrEqual(150)
    expect(report.judged_queries).toBeGreaterThanOrEqual(100)
    expect(report.convs).toBe(3)
    expect(report.warnings).toEqual([])
    expect(report.runs[0]?.queries).toBe(12)
    expectMetricsInRange(report)
    // cq03 names Selenium and 元素 as its entry c03 does: the easy end of the set
    const easy = report.runs[0]?.per_query?.find((q) => q.id === 'cq03')
    expect(easy?.ranked.slice(0, 3)).toContain('c03')
    expect(report.runs[0]?.['recall@10']).toBeGreaterThan(0.5)
  })

  it('measures precision on a completely judged set: the issue 26 store (--limit 14), per language, and context precision on its task', async () => {
    const table = await run('eval', SMALL_STORES, '--limit', '14', '--embedder', 'hashed')
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/P@3\s+P@5\s+unrel@3\s+unrel@5\s+empty@5\s+hit@5\s+nDCG@10\s+R@10\s+no-ans@5/)
    expect(table.stdout).toMatch(/small-stores\s+hybrid\s+en\s+10\s+8\s+2\s/)
    expect(table.stdout).toMatch(/context precision/)

    const json = await run('eval', SMALL_STORES, '--limit', '14', '--embedder', 'hashed', '--json', '--per-query')
    expect(json.code, json.stderr).toBe(0)
    const report = JSON.parse(json.stdout) as EvalReport
    const by = new Map((report.precision ?? []).map((m) => [m.lang, m]))
    expect([...by.keys()]).toEqual(['all', 'en', 'zh'])
    // mix-newuser: 13 queries (10 answerable, 3 about nothing stored) and one task
    expect(by.get('all')).toMatchObject({ mode: 'hybrid', queries: 14, answerable: 11, no_answer: 3 })
    expect(by.get('zh')).toMatchObject({ queries: 4, answerable: 3, no_answer: 1 })
    const perQuery = by.get('all')!.per_query!
    expect(perQuery.map((q) => q.id)).toEqual(Array.from({ length: 14 }, (_, i) => `mix-newuser-q${String(i + 1).padStart(2, '0')}`))
    // the known-easy query finds its entry first; every result is one of the store's entries
    expect(perQuery.find((q) => q.id === 'mix-newuser-q02')?.top3[0]).toBe('mix-newuser-e02')
    for (const q of perQuery) for (const id of q.top10) expect(id).toMatch(/^mix-newuser-e\d\d$/)
    for (const at of by.get('all')!.at) {
      const lists = perQuery.map((q) => (at.k === 3 ? q.top3 : q.top5))
      expect(at.returned).toBe(lists.reduce((sum, l) => sum + l.length, 0))
    }
    const [context] = report.context_precision ?? []
    expect(context).toMatchObject({ lang: 'all', tasks: 1 })
    expect(context!.goal_focus.entries).toBeLessThanOrEqual(3)
  })

  it('takes real sets as they come: skips blank lines and blank queries or documents with warnings, stores long documents, honours meta.scope', async () => {
    const long = `Long report about ${'the zephyrine harvest '.repeat(600)}end.`
    expect(long.length).toBeGreaterThan(10_000)
    const set = writeSet('real', {
      'corpus.jsonl': `${jsonl([
        { id: 'a1', text: 'Alice planted zephyrine tulips in the north garden', meta: { conv: 'c', session: 1 } },
        { id: 'a2', text: 'Alice planted zephyrine tulips in the south garden', meta: { conv: 'c', session: 2 } },
        { id: 'a3', text: 'Bob repaired the garden fence', meta: { conv: 'c', session: 3 } },
        { id: 'blank', text: '   ', meta: { conv: 'c' } },
        { id: 'long', text: long, meta: { conv: 'c', session: 3 } },
      ])}\n\n`,
      'queries.jsonl': jsonl([
        { id: 'q-north', text: 'where did Alice plant zephyrine tulips', meta: { conv: 'c', scope: { field: 'session', in: [1] } } },
        { id: 'q-south', text: 'where did Alice plant zephyrine tulips', meta: { conv: 'c', scope: { field: 'session', in: [2, 3] } } },
        { id: 'q-long', text: 'zephyrine harvest report', meta: { conv: 'c' } },
        { id: 'q-blank', text: '', meta: { conv: 'c' } },
      ]),
      'qrels.jsonl': jsonl([
        { query_id: 'q-north', doc_id: 'a1' },
        { query_id: 'q-south', doc_id: 'a2' },
        { query_id: 'q-long', doc_id: 'long' },
      ]),
    })
    const result = await run('eval', set, '--mode', 'fulltext', '--json', '--per-query', '--embedder', 'hashed')
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout) as EvalReport
    expect(report.warnings).toEqual(
      expect.arrayContaining([
        { path: 'corpus.jsonl', message: '2 blank lines skipped' },
        { path: 'corpus.jsonl: blank', message: 'blank text: skipped' },
        { path: 'queries.jsonl: q-blank', message: 'blank text: skipped' },
      ]),
    )
    expect(result.stderr).toMatch(/warning: queries\.jsonl: q-blank: blank text: skipped/)
    expect(report).toMatchObject({ docs: 4, judged_queries: 3 })
    const ranked = new Map((report.runs[0]?.per_query ?? []).map((q) => [q.id, q.ranked]))
    // Same words, two haystacks: each query sees only the sessions its meta.scope names.
    expect(ranked.get('q-north')).toEqual(['a1'])
    expect(ranked.get('q-south')?.[0]).toBe('a2')
    expect(ranked.get('q-south')).not.toContain('a1')
    expect(ranked.get('q-long')?.[0]).toBe('long')
  })

  it('measures the no-answer rate (--absent) and feedback robustness (--feedback)', async () => {
    const absent = join(dir, 'absent.jsonl')
    writeFileSync(
      absent,
      jsonl([
        { id: 'n1', text: 'What is the melting point of tungsten?' },
        { id: 'n2', text: '今天巴黎的天气怎么样' },
      ]),
    )
    const result = await run('eval', writeSet('trust'), '--json', '--embedder', 'hashed', '--absent', absent, '--feedback')
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout) as EvalReport
    expect(report.no_answer).toEqual([{ file: absent, mode: 'hybrid', queries: 2, searches: 4, answered: 0, rate: 0 }])
    expect(report.feedback).toMatchObject({ seed: 17, entries: 6 })
    expect(report.feedback!.recall10_after).toBeGreaterThanOrEqual(0)
    expect(report.feedback!.pairs).toBeGreaterThan(0)
    // A folder stands for its queries.jsonl, as bench/data/no-answer-en does.
    const folder = join(dir, 'absent-set')
    mkdirSync(folder)
    copyFileSync(absent, join(folder, 'queries.jsonl'))
    const table = await run('eval', writeSet('trust2'), '--embedder', 'hashed', '--absent', folder)
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/no-answer .*absent-set hybrid: 0 of 4 searches/)
    const empty = join(dir, 'absent-empty')
    mkdirSync(empty)
    const missing = await run('eval', writeSet('trust3'), '--embedder', 'hashed', '--absent', empty)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/error \[not_found\]: Cannot read the no-answer queries .*absent-empty.queries\.jsonl: there is no such file/)
  })

  it('gives clear errors: missing folder, missing files, malformed lines, nothing judged, bad options', async () => {
    const missing = await run('eval', join(dir, 'nope'))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/error \[not_found\]: Retrieval set folder .*nope does not exist/)

    const noFiles = await run('eval', writeSet('partial', { 'qrels.jsonl': null, 'queries.jsonl': null }))
    expect(noFiles.code).toBe(1)
    expect(noFiles.stderr).toMatch(/error \[not_found\]: .* is missing queries\.jsonl, qrels\.jsonl/)

    const file = join(dir, 'a-file')
    writeFileSync(file, 'x')
    expect((await run('eval', file)).stderr).toMatch(/is not a folder/)

    const bad = writeSet('bad', {
      'corpus.jsonl': `${jsonl([{ id: 'a', text: 'fine', meta: { conv: 'c' } }])}{"id": "b", "text": \n{"id": "c"}\n`,
    })
    const malformed = await run('eval', bad)
    expect(malformed.code).toBe(1)
    expect(malformed.stderr).toContain('error [validation_error]')
    expect(malformed.stderr).toMatch(/corpus\.jsonl:2: not valid JSON/)
    expect(malformed.stderr).toMatch(/corpus\.jsonl:3: text/)

    const unjudged = await run('eval', writeSet('unjudged', { 'qrels.jsonl': jsonl([{ query_id: 'q-other', doc_id: 'sel' }]) }))
    expect(unjudged.code).toBe(1)
    expect(unjudged.stderr).toMatch(/warning: qrels\.jsonl: q-other: unknown query id/)
    expect(unjudged.stderr).toMatch(/no judged queries/)

    const badMode = await run('eval', writeSet('tiny2'), '--mode', 'semantic')
    expect(badMode.code).not.toBe(0)
    expect(badMode.stderr).toMatch(/Allowed choices are hybrid, fulltext, vector, all/)
    const badLimit = await run('eval', writeSet('tiny3'), '--limit', '0')
    expect(badLimit.code).toBe(1)
    expect(badLimit.stderr).toMatch(/--limit must be an integer from 1/)

    expect((await run('eval', '--help')).stdout).toMatch(/Usage: knowhub eval/)
  })
})
