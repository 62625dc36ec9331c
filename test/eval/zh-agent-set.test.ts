/**
 * KnowHub's Chinese retrieval set (bench/data/zh-agent): well-formed, big enough,
 * every judgement names a query and a document of the same conv, and most queries
 * are paraphrases that share no 4-character Chinese phrase with their relevant entries.
 */
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkSet, longestCommonCjk } from '../../bench/check-set.js'
import { convOf, loadRetrievalSet } from '../../src/eval/dataset.js'

const ZH_AGENT = resolve(import.meta.dirname, '..', '..', 'bench', 'data', 'zh-agent')

describe('longestCommonCjk', () => {
  it('measures the longest shared run of CJK characters', () => {
    expect(longestCommonCjk('用户喜欢什么样的编码风格', '用户编码风格偏好')).toBe(4)
    expect(longestCommonCjk('这位开发者写代码时倾向用哪种语言', '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全')).toBe(1)
    expect(longestCommonCjk('硬盘满了', '磁盘被日志写满')).toBe(1)
    expect(longestCommonCjk('数据库写不进去', '日志轮转')).toBe(0)
    expect(longestCommonCjk('Selenium 登入 A 站', 'Selenium 登录网站 A')).toBe(1)
    expect(longestCommonCjk('no cjk here', 'no cjk here')).toBe(0)
  })
})

describe('the zh-agent retrieval set', () => {
  it('is well-formed, large enough, and judged within each conv', async () => {
    const set = await loadRetrievalSet(ZH_AGENT)
    const report = checkSet(set, { minDocs: 150, minQueries: 100 })
    expect(report.problems).toEqual([])
    expect(set.warnings).toEqual([])
    expect(report.docs).toBeGreaterThanOrEqual(150)
    expect(report.judged_queries).toBeGreaterThanOrEqual(100)
    expect(report.judged_queries).toBe(report.queries)
    expect(Object.keys(report.convs).length).toBeGreaterThanOrEqual(3)
    const docs = new Map(set.docs.map((d) => [d.id, d]))
    for (const q of set.queries) {
      for (const docId of set.qrels.get(q.id)?.keys() ?? []) {
        const doc = docs.get(docId)
        expect(doc, `${q.id} → ${docId}`).toBeDefined()
        expect(convOf(doc!), `${q.id} → ${docId}`).toBe(convOf(q))
      }
    }
    for (const d of set.docs) {
      expect(d.meta.task, d.id).toBeTruthy()
      expect(d.meta.types?.length, d.id).toBeGreaterThan(0)
      expect(/[\u4e00-\u9fff]/u.test(d.text), d.id).toBe(true)
    }
  })

  it('is mostly paraphrases: >= 60% of queries share no 4-character phrase with their relevant entries', async () => {
    const report = checkSet(await loadRetrievalSet(ZH_AGENT))
    expect(report.no_phrase.phrase).toBe(4)
    expect(report.no_phrase.share).toBeGreaterThanOrEqual(0.6)
    // …and not all of them: the set keeps an easy end too
    expect(report.no_phrase.count).toBeLessThan(report.judged_queries)
  })
})
