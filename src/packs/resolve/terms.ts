/**
 * What a task asks for, as the resolver reads it: its content terms (the
 * nouns and names a fact is about — not request verbs, question words or
 * meta words such as "cite" or "介绍") grouped into concepts, each concept
 * with the words a section may use for it ("cost" is answered by "price").
 * Fact-level decisions (does a section answer the task, which facts are
 * missing) are made on concepts, never on raw task words.
 */
import { documentTerms, queryTerms, type WeightedTerm } from '../pack-index/lexical.js'

/**
 * Words of a task that say what to do with a fact, not which fact: request
 * and writing verbs, question words, evidence and comparison words, output
 * forms. Stemmed as {@link documentTerms} stems them. Never a concept, never missing.
 */
const TASK_WORDS_TEXT =
  'write draft reply respond answer explain summary summarise summarize describe list create make compose help ask question tell say ' +
  'customer user email message post text short long brief quick new please thank need want know look find check give provide ' +
  'cite citation source verify confirm compare comparison versus mention mentioning quote include including detail details detailed ' +
  'what which how much many does did doing done can could would should tell show based according using about regarding ' +
  'sentence paragraph bullet point summary overview note answer reply friendly polite tone-free also any some one two three ' +
  'start end begin aim'
const TASK_WORDS: ReadonlySet<string> = new Set(documentTerms(TASK_WORDS_TEXT))

/** Chinese task words: request, question and meta words (a fact is never one of them). */
const ZH_TASK_WORDS: ReadonlySet<string> = new Set(
  (
    '多少钱 多少 多久 多长 几个 几天 什么 哪些 哪个 怎么 怎样 如何 是否 为什么 介绍 说明 解释 总结 概括 列出 列举 写 写一段 撰写 回复 回答 ' +
    '引用 出处 来源 核实 核验 验证 比较 对比 要求 需要 提到 提及 告诉 请问 一下 简要 简单 详细 具体 相关 关于 根据 用 以 口吻 语气 风格 帖子 文案 一段 一条 科普 几点'
  ).split(' '),
)

/**
 * Concepts a task word stands for, with the words a section may use for them
 * (both directions: a section about "pricing" answers "how much does it
 * cost"). Stems, as {@link documentTerms} gives them.
 */
const CONCEPT_GROUPS: readonly string[][] = [
  ['price', 'cost', 'pricing', 'fee', 'charge', 'usd', 'eur', '价格', '多少钱', '费用', '收费', '定价', '售价', '元'],
  ['warranty', 'guarantee', '保修', '质保'],
  ['refund', 'return', 'reimburs', '退款', '退货', '退费'],
  ['hour', 'schedule', 'available', '时间', '营业', '工作时间', '几点', '上班', '在线'],
  ['deadline', 'due', 'date', '截止', '日期'],
  ['discount', 'promotion', 'coupon', '折扣', '优惠'],
  ['ship', 'deliver', 'shipping', 'delivery', '发货', '配送', '物流'],
  ['limit', 'maximum', 'cap', '上限', '限额', '最多'],
  ['escalat', 'escalate', '升级'],
  ['battery', '电池', '续航'],
  ['forbidden', 'taboo', 'never', 'prohibit', '禁止', '禁区', '禁忌', '不能', '不得'],
  ['retention', 'churn', 'leave', 'leaving', 'cancel', '留存', '流失'],
  ['shelf life', 'expiry', '保质期', '保存'],
]

const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, string[]>()
  for (const group of CONCEPT_GROUPS) {
    const stems = [...new Set(group.flatMap((w) => (/[a-z]/u.test(w) ? documentTerms(w) : [w])))]
    for (const stem of stems) map.set(stem, [...new Set([...(map.get(stem) ?? []), ...stems.filter((s) => s !== stem)])])
  }
  return map
})()

const CJK = /[\u3400-\u9fff]/u

/** One thing the task asks about: its surface word and the index terms that stand for it. */
export interface TaskConcept {
  /** The word as the task writes it. */
  surface: string
  /** Index terms that answer it: the word's own term first, then its synonyms. */
  terms: string[]
  /** A CJK bigram: counts for coverage, never reported missing. */
  minor?: boolean
  /** Weight of the concept: 1 for a content word, 0.75 for a question word that names one (多少钱); × 1.5 for an attribute with synonyms (price). */
  weight: number
}

/**
 * True when a task term says what to do rather than which fact (request verbs,
 * question words, "cite", "compare", "多少钱", "介绍").
 * @example
 * isTaskWord('compar') // true
 */
export function isTaskWord(term: WeightedTerm): boolean {
  return TASK_WORDS.has(term.term) || ZH_TASK_WORDS.has(term.term) || /^\d+$/u.test(term.term) || term.weight < 1
}

/**
 * The concepts of a task: its whole-word content terms (task words dropped),
 * each with its synonyms. A task that is only task words ("多少钱？") keeps
 * the concepts those words stand for.
 * @example
 * taskConcepts(queryTerms('What does the Team plan cost?')).map((c) => c.surface) // ['team', 'plan', 'cost']
 */
export function taskConcepts(terms: readonly WeightedTerm[]): TaskConcept[] {
  const concepts: TaskConcept[] = []
  for (const term of terms) {
    // A CJK character bigram (the segmenter knows no word there: 大红袍, 保质期) counts a little, so that sections naming it rank first.
    if (term.weight < 1 && CJK.test(term.term) && [...term.term].length === 2) {
      concepts.push({ surface: term.surface, terms: [term.term], weight: 0.25, minor: true })
      continue
    }
    const synonyms = SYNONYMS.get(term.term) ?? []
    const content = !isTaskWord(term)
    // A question word that names a concept ("多少钱" → price) still asks for that concept.
    if (!content && synonyms.length === 0) continue
    if (!content && term.weight < 1) continue
    // An attribute a question asks for (price, warranty, refund window…) weighs more than the names around it:
    // "What does the Team plan cost?" is answered by the section with the price, not by any section naming the plan.
    const weight = (content ? 1 : 0.75) * (synonyms.length > 0 ? 1.5 : 1)
    concepts.push({ surface: term.surface, terms: [term.term, ...synonyms], weight })
  }
  return concepts
}

/**
 * The task's terms plus the synonyms of its concepts (at 0.6 of the word's
 * weight), for scoring sections.
 * @example
 * expandTerms(queryTerms('Team plan cost')).some((t) => t.term === 'price') // true
 */
export function expandTerms(terms: readonly WeightedTerm[]): WeightedTerm[] {
  const out = new Map(terms.map((t) => [t.term, t]))
  for (const term of terms) {
    for (const synonym of SYNONYMS.get(term.term) ?? []) {
      if (!out.has(synonym)) out.set(synonym, { term: synonym, weight: term.weight * 0.6, surface: term.surface })
    }
  }
  return [...out.values()]
}

/**
 * The share (0…1) of the task's concept weight a text covers.
 * @example
 * conceptCoverage(taskConcepts(queryTerms('team plan cost')), new Set(documentTerms('Team plan: 18 USD'))) // 1
 */
export function conceptCoverage(concepts: readonly TaskConcept[], has: (term: string) => boolean): number {
  const total = concepts.reduce((sum, c) => sum + c.weight, 0)
  if (total === 0) return 0
  const covered = concepts.reduce((sum, c) => sum + (c.terms.some(has) ? c.weight : 0), 0)
  return covered / total
}

/**
 * Terms of a text as a set (for coverage checks).
 * @example
 * termSet('Pricing: 18 USD').has('price') // true
 */
export function termSet(text: string): Set<string> {
  return new Set(documentTerms(text))
}

/** Joins concept surfaces into a phrase: spaces between Latin words, none between CJK words. */
export function joinSurfaces(surfaces: readonly string[]): string {
  return surfaces.join(CJK.test(surfaces[0] ?? '') ? '' : ' ')
}

export { queryTerms }
