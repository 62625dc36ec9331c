import { describe, expect, it } from 'vitest'
import { absoluteDate, asksWhen, dateMatches, mentionsTime, namedDates } from '../../src/core/text/index.js'

describe('dates named in text', () => {
  it('reads days, months, years and months of any year, most specific first', () => {
    expect(namedDates('What painting did Melanie show on October 13, 2023?')).toEqual([{ year: 2023, month: 10, day: 13 }])
    expect(namedDates('What did Gina find on 1 February, 2023?')).toEqual([{ year: 2023, month: 2, day: 1 }])
    expect(namedDates('What class did Maria start in December 2023?')).toEqual([{ year: 2023, month: 12 }])
    expect(namedDates('How often did she go to the beach in 2023?')).toEqual([{ year: 2023 }])
    expect(namedDates('When did Melanie go camping in June?')).toEqual([{ month: 6 }])
    expect(namedDates('deployed 2023-05-08, then 2024-01')).toEqual([
      { year: 2023, month: 5, day: 8 },
      { year: 2024, month: 1 },
    ])
    expect(namedDates('2023年5月8日上线,2024年3月复盘')).toEqual([
      { year: 2023, month: 5, day: 8 },
      { year: 2024, month: 3 },
    ])
  })

  it('ignores the modal "may", impossible days and numbers that are no years', () => {
    expect(namedDates('I may go in may')).toEqual([])
    expect(namedDates('on February 30, 2023')).toEqual([])
    expect(namedDates('retry 3000 times, port 8080')).toEqual([])
  })

  it('reads the day of a LoCoMo session date and matches dates to named ones', () => {
    const day = absoluteDate('1:56 pm on 8 May, 2023')!
    expect(day.toISOString()).toBe('2023-05-08T00:00:00.000Z')
    expect(absoluteDate('in May 2023')).toBeUndefined()
    expect(dateMatches(day, { year: 2023, month: 5, day: 9 })).toBe(true)
    expect(dateMatches(day, { year: 2023, month: 5, day: 11 })).toBe(false)
    expect(dateMatches(day, { year: 2023, month: 5 })).toBe(true)
    expect(dateMatches(day, { month: 5 })).toBe(true)
    expect(dateMatches(day, { year: 2024, month: 5 })).toBe(false)
  })

  it('knows a "when" question and a text that says when', () => {
    expect(asksWhen('When did Caroline go to the support group?')).toBe(true)
    expect(asksWhen('How long has she had her friends?')).toBe(true)
    expect(asksWhen('What did she say when it rained?')).toBe(false)
    expect(mentionsTime('I went to a support group yesterday')).toBe(true)
    expect(mentionsTime('We moved here three years ago')).toBe(true)
    expect(mentionsTime('The support group was powerful')).toBe(false)
  })
})
