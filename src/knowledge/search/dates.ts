/**
 * Time in questions (issue 17.4, temporal questions). A query that names a day or a month ("on
 * October 13, 2023", "in July 2023", "in June", "2023年5月") prefers the entries dated then — an
 * entry's date is its source timestamp when that is a date (when the agent had the
 * experience), else when it was saved. A question that asks when ("When did…", "How long…")
 * prefers entries that say when (a relative time, a year, a month, a weekday). Measured on
 * LoCoMo in docs/retrieval-log.md ("Time in questions").
 */
import { asksWhen, dateMatches, mentionsTime, namedDates, type NamedDate } from '../../core/text/index.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'

/**
 * How much a candidate dated on a date the query names gains, in units of the best
 * candidate's fused score (measured: 0.3-1 give the same recall on LoCoMo; 0.5 kept).
 */
export const DATE_BOOST = 0.5

/** How much a candidate that says when gains for a "when" question (measured: 0.2 on LoCoMo). */
export const WHEN_BOOST = 0.2

/** What a query asks about time: the days or months it names, and whether it asks when. */
export interface TimeQuery {
  dates: NamedDate[]
  when: boolean
}

/**
 * The time a query asks about, or undefined when it asks about none. Only a day or a month
 * selects entries (a year alone names too much of a store to prefer anything by).
 * @example
 * timeQuery('What did Maria do in December 2023?') // { dates: [{ year: 2023, month: 12 }], when: false }
 */
export function timeQuery(q: string): TimeQuery | undefined {
  const dates = namedDates(q).filter((d) => d.month !== undefined)
  const when = asksWhen(q)
  return dates.length > 0 || when ? { dates, when } : undefined
}

/**
 * The date of an entry: its source timestamp when that parses as a date, else its creation.
 * @example
 * entryDate(record) // 2023-05-08T00:00:00.000Z
 */
export function entryDate(record: Pick<KnowledgeRecord, 'source' | 'created_at'>): Date {
  const stamp = record.source.timestamp
  const parsed = stamp ? Date.parse(stamp) : NaN
  return Number.isNaN(parsed) ? record.created_at : new Date(parsed)
}

/**
 * Adds to each candidate's fused score, in units of the best candidate's: {@link DATE_BOOST}
 * when its entry is dated on a date the query names, {@link WHEN_BOOST} when the query asks
 * when and the entry says when. `recordOf` gives a candidate's entry (undefined: not visible
 * any more). Order is kept.
 * @example
 * boostByTime(candidates, timeQuery(q)!, (id) => records.get(id))
 */
export function boostByTime<T extends { id: string; fused: number }>(
  candidates: readonly T[],
  time: TimeQuery,
  recordOf: (id: string) => Pick<KnowledgeRecord, 'source' | 'created_at' | 'task' | 'content'> | undefined,
): Array<T & { time_boost: number }> {
  const best = candidates.reduce((max, c) => Math.max(max, c.fused), 0)
  return candidates.map((c) => {
    const record = recordOf(c.id)
    let share = 0
    if (record && time.dates.length > 0) {
      const at = entryDate(record)
      if (time.dates.some((d) => dateMatches(at, d))) share += DATE_BOOST
    }
    if (record && time.when && mentionsTime(record.task === record.content ? record.content : `${record.task}\n${record.content}`)) share += WHEN_BOOST
    const time_boost = share * best
    return { ...c, fused: c.fused + time_boost, time_boost }
  })
}
