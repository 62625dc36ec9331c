/**
 * The one text-analysis module (src/core/text/): tokenising, CJK segmentation, the named
 * stop-word lists, the one stemmer and the one BM25 scorer that search, the hashed
 * embedder and the pack resolver share.
 */
import { describe, expect, it } from 'vitest'
import {
  Bm25,
  EMBEDDER_STOP_WORDS,
  IRREGULAR_FORMS,
  KNOWLEDGE_BM25,
  PACK_BM25,
  PACK_STOP_WORDS,
  SEARCH_STOP_WORDS,
  bm25,
  bm25Bound,
  bm25Idf,
  cjkSegments,
  latinWords,
  searchTerms,
  segment,
  stemWord,
} from '../../src/core/text/index.js'
import { documentTerms, queryTerms } from '../../src/packs/pack-index/lexical.js'

describe('tokenising and CJK segmentation', () => {
  it('lower-cases Latin words, drops possessive s and apostrophes, leaves CJK runs out', () => {
    expect(latinWords("Caroline's car don't ＦＵＬＬ 用户 v2.1")).toEqual(['caroline', 'car', 'dont', 'full', 'v2', '1'])
  })

  it('gives CJK words and only the bigrams that are not also words', () => {
    const { words, bigrams } = cjkSegments('用户偏好')
    expect(words).toEqual(['用户', '偏好'])
    expect(bigrams).toEqual(['户偏'])
    expect(segment('用户偏好 TypeScript')).toEqual({ latin: ['typescript'], cjk: ['用户', '偏好', '户偏'] })
    expect(cjkSegments('no cjk here')).toEqual({ words: [], bigrams: [] })
  })
})

describe('the one stemmer', () => {
  it('maps irregular forms to their base word, then Porter-stems', () => {
    expect(stemWord('went')).toBe('go')
    expect(stemWord('bought')).toBe('bui')
    expect(stemWord('buying')).toBe('bui')
    expect(stemWord('children')).toBe('child')
    expect(stemWord('geese')).toBe(stemWord('goose'))
    expect(stemWord('painting')).toBe('paint')
  })

  it('leaves out ambiguous forms (documented in stem.ts)', () => {
    for (const form of ['bit', 'bound', 'bore', 'left', 'led', 'lit', 'rose']) {
      expect(IRREGULAR_FORMS.has(form), form).toBe(false)
      expect(stemWord(form)).toBe(form)
    }
    // `lay` is a base word (of `laid`), never a form of `lie`.
    expect(IRREGULAR_FORMS.get('laid')).toBe('lay')
    expect(IRREGULAR_FORMS.has('lay')).toBe(false)
  })

  it('keeps short and non-ASCII words as they are', () => {
    expect(stemWord('go')).toBe('go')
    expect(stemWord('über')).toBe('über')
    expect(stemWord('v2')).toBe('v2')
  })

  it('is the stemmer of search terms and pack terms alike', () => {
    expect(searchTerms('Caroline went to the support groups')).toEqual(['carolin', 'go', 'support', 'group'])
    expect(documentTerms('Caroline went to the support groups')).toEqual(['carolin', 'go', 'support', 'group'])
    expect(queryTerms('children went').map((t) => t.term)).toEqual(['child', 'go'])
  })
})

describe('aliases', () => {
  it('gives both names of one thing the same search terms, on entries and queries alike', () => {
    const shares = (a: string, b: string) => searchTerms(a).some((t) => searchTerms(b).includes(t))
    expect(shares('postgres import is slow', 'Speed up PostgreSQL bulk loads')).toBe(true)
    expect(shares('k8s pod restarts', 'Kubernetes deployment')).toBe(true)
    expect(shares('what goes into a changelog', 'Write release notes')).toBe(true)
    expect(shares('怎么上线新版本', '新版本部署计划')).toBe(true)
    expect(searchTerms('怎么上线')).toContain('部署')
    expect(shares('接口返回 429', '接口限流策略')).toBe(true)
    expect(shares('rate limiting', '限流')).toBe(true)
    expect(searchTerms('postgres release notes')).toEqual(['postgresql', 'releas', 'note', 'changelog'])
    // A phrase alias needs its words together; a word that only starts like an alias is not one.
    expect(shares('release the cat', 'changelog')).toBe(false)
    expect(searchTerms('postgresify')).toEqual(['postgresifi'])
  })

  it('knows general engineering shorthand: the short and the long form of one word', () => {
    const shares = (a: string, b: string) => searchTerms(a).some((t) => searchTerms(b).includes(t))
    expect(shares('db is down', 'the database server')).toBe(true)
    expect(shares('clone the repo', 'repository layout')).toBe(true)
    expect(shares('prod config', 'production configuration')).toBe(true)
    expect(shares('the job died of OOM', 'ran out of memory')).toBe(true)
    expect(shares('review the pull request', 'open a merge request')).toBe(true)
    expect(shares('request timed out', 'raise the timeout')).toBe(true)
    expect(shares('服务报警了', '告警规则')).toBe(true)
    // Words that only look alike stay apart.
    expect(shares('time off', 'timeout')).toBe(false)
    expect(shares('pull the latest changes', 'merge request')).toBe(false)
    // 登陆 is also a typhoon's landfall: not an alias of 登录 (log in).
    expect(shares('台风登陆', '登录流程')).toBe(false)
  })
})

describe('stop words by purpose', () => {
  it('are named lists with the differences their consumers need', () => {
    expect(SEARCH_STOP_WORDS.has('the') && EMBEDDER_STOP_WORDS.has('the') && PACK_STOP_WORDS.has('the')).toBe(true)
    // Request words of a pack task say nothing about which section answers it.
    expect(PACK_STOP_WORDS.has('please')).toBe(true)
    expect(SEARCH_STOP_WORDS.has('please')).toBe(false)
    // Chat filler makes every conversation turn look alike to the embedder.
    expect(EMBEDDER_STOP_WORDS.has('okay')).toBe(true)
    expect(SEARCH_STOP_WORDS.has('okay')).toBe(false)
  })
})

describe('the one BM25 scorer', () => {
  it('computes the textbook formula with each consumer’s parameters', () => {
    for (const params of [KNOWLEDGE_BM25, PACK_BM25]) {
      const { k1, b } = params
      const docs = 1000
      const total = 24_000
      const avg = total / docs
      const scorer = bm25(params, docs, total)
      expect(scorer).toBeInstanceOf(Bm25)
      const idf = Math.log(1 + (docs - 10 + 0.5) / (10 + 0.5))
      expect(scorer.idf(10)).toBeCloseTo(idf, 12)
      expect(scorer.score(idf, 3, 30)).toBeCloseTo((idf * 3 * (k1 + 1)) / (3 + k1 * (1 - b + (b * 30) / avg)), 12)
      expect(bm25Bound(params, idf)).toBeCloseTo(idf * (k1 + 1), 12)
    }
    expect(KNOWLEDGE_BM25).toEqual({ k1: 1.2, b: 0.5 })
    expect(PACK_BM25).toEqual({ k1: 1.2, b: 0.75 })
  })

  it('never gives a negative idf, and an empty collection a mean length of 1', () => {
    expect(bm25Idf(10, 10)).toBeGreaterThan(0)
    expect(bm25Idf(10, 50)).toBe(0)
    expect(bm25(KNOWLEDGE_BM25, 0, 0).avgLength).toBe(1)
  })
})
