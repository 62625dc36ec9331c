/**
 * Calendar dates named in text (issue 17.4, temporal questions): "on 8 May, 2023",
 * "October 13, 2023", "in July 2023", "in 2022", "in June", "2023-05-08", "2023年5月8日". Search
 * reads them in a query and prefers entries dated then (docs/retrieval-log.md, "Dates in
 * questions"); the evaluation reads an absolute date in a document's `meta.date`.
 */

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\\.?`
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?'
const YEAR = '((?:19|20)\\d{2})'

/** A named date: a day, a month or a year, or a month of any year (`year` undefined). */
export interface NamedDate {
  year?: number
  /** 1-12. */
  month?: number
  day?: number
}

function monthOf(name: string): number {
  const key = name.toLowerCase().replace('.', '')
  return MONTHS.findIndex((m) => m.startsWith(key.slice(0, 3))) + 1
}

function validDay(year: number | undefined, month: number, day: number): boolean {
  return day >= 1 && day <= new Date(Date.UTC(year ?? 2000, month, 0)).getUTCDate()
}

/** Patterns, most specific first; each match's span is blanked so that a less specific one does not match it again. */
const PATTERNS: Array<{ re: RegExp; read: (m: RegExpExecArray) => NamedDate | undefined }> = [
  { re: /\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b/g, read: (m) => ({ year: +m[1]!, month: +m[2]!, day: +m[3]! }) },
  { re: /((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]/g, read: (m) => ({ year: +m[1]!, month: +m[2]!, day: +m[3]! }) },
  { re: new RegExp(`\\b${DAY}\\s+${MONTH},?\\s+${YEAR}\\b`, 'gi'), read: (m) => ({ year: +m[3]!, month: monthOf(m[2]!), day: +m[1]! }) },
  { re: new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'gi'), read: (m) => ({ year: +m[3]!, month: monthOf(m[1]!), day: +m[2]! }) },
  { re: /\b((?:19|20)\d{2})-(\d{2})\b/g, read: (m) => ({ year: +m[1]!, month: +m[2]! }) },
  { re: /((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月/g, read: (m) => ({ year: +m[1]!, month: +m[2]! }) },
  { re: new RegExp(`\\b${MONTH},?\\s+(?:of\\s+)?${YEAR}\\b`, 'gi'), read: (m) => ({ year: +m[2]!, month: monthOf(m[1]!) }) },
  // A year alone, and a month alone only after a preposition ("in June"; "may" must be "May").
  { re: /((?:19|20)\d{2})\s*年/g, read: (m) => ({ year: +m[1]! }) },
  { re: new RegExp(`\\b(?:in|during|since|of|until|by)\\s+${YEAR}\\b`, 'gi'), read: (m) => ({ year: +m[1]! }) },
  {
    re: new RegExp(`\\b(?:in|during|since|until|by|early|late|mid|last|this|next)[\\s-]+${MONTH}\\b`, 'gi'),
    read: (m) => (/^may$/.test(m[1]!) ? undefined : { month: monthOf(m[1]!) }),
  },
]

/**
 * The dates a text names, most specific first ({@link NamedDate}); impossible days are left out.
 * @example
 * namedDates('What did Melanie paint on October 13, 2023?') // [{ year: 2023, month: 10, day: 13 }]
 * namedDates('When did she go camping in June?') // [{ month: 6 }]
 */
export function namedDates(text: string): NamedDate[] {
  let rest = text
  const found: NamedDate[] = []
  for (const { re, read } of PATTERNS) {
    re.lastIndex = 0
    rest = rest.replace(re, (...args: unknown[]) => {
      const m = args.slice(0, -2) as unknown as RegExpExecArray
      const date = read(m)
      const ok =
        date !== undefined &&
        (date.month === undefined || (date.month >= 1 && date.month <= 12)) &&
        (date.day === undefined || validDay(date.year, date.month!, date.day))
      if (ok) found.push(date)
      return ok ? ' '.repeat(String(m[0]).length) : String(m[0])
    })
  }
  return found
}

/**
 * The absolute date (a day) that a text names first, as UTC midnight, or undefined: for
 * `meta.date` of a document ("1:56 pm on 8 May, 2023").
 * @example
 * absoluteDate('1:56 pm on 8 May, 2023') // 2023-05-08T00:00:00.000Z
 */
export function absoluteDate(text: string): Date | undefined {
  const day = namedDates(text).find((d) => d.day !== undefined && d.year !== undefined)
  return day ? new Date(Date.UTC(day.year!, day.month! - 1, day.day!)) : undefined
}

/**
 * True when `date` (UTC) falls on the named date: the same day (± `slackDays`), month, year,
 * or month of any year.
 * @example
 * dateMatches(new Date('2023-10-13T15:00:00Z'), { year: 2023, month: 10 }) // true
 */
export function dateMatches(date: Date, named: NamedDate, slackDays = 1): boolean {
  if (named.day !== undefined && named.year !== undefined && named.month !== undefined) {
    const target = Date.UTC(named.year, named.month - 1, named.day)
    const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
    return Math.abs(day - target) <= slackDays * 86_400_000
  }
  if (named.year !== undefined && date.getUTCFullYear() !== named.year) return false
  if (named.month !== undefined && date.getUTCMonth() + 1 !== named.month) return false
  return true
}

/** Words that say when something happened or will (English). */
const TIME_EXPRESSION =
  /\b(?:yesterday|today|tonight|tomorrow|ago|last (?:week|weekend|month|year|night|summer|winter|spring|fall|time)|next (?:week|weekend|month|year)|this (?:week|weekend|month|year|morning|summer)|weekend|recently|years?|months?|weeks?|(?:19|20)\d\d|january|february|march|april|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i

/**
 * True when the text says when something happened: a relative time ("yesterday", "last
 * week", "two years ago"), a year, a month or a weekday (English).
 * @example
 * mentionsTime('I went to a support group yesterday') // true
 */
export function mentionsTime(text: string): boolean {
  return TIME_EXPRESSION.test(text)
}

/**
 * True for a question about when something happened or how long it lasted ("When did…",
 * "How long…"; English).
 * @example
 * asksWhen('When did Caroline go to the LGBTQ support group?') // true
 */
export function asksWhen(q: string): boolean {
  return /^\s*(?:when|how long)\b/i.test(q)
}
