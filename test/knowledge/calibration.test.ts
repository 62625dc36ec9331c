/**
 * How search reads an embedder's similarities (issue 40, src/knowledge/search/calibration.ts): the
 * offline embedders keep their own floors, multilingual-e5-small with its convention gets its
 * table, any other model behind a convention the self-calibration rule, an embedder with neither
 * no floor; the rule's figures in standard deviations over the median.
 */
import { describe, expect, it } from 'vitest'
import { NAMED_CONVENTIONS } from '../../src/core/embed-convention.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { calibrationFor, SELF_CALIBRATION, selfCalibrated } from '../../src/knowledge/search/calibration.js'
import { injectionReplacesAnswer } from '../../src/knowledge/search/gate-weights.js'

const convention = (name: keyof typeof NAMED_CONVENTIONS) => ({ applied: NAMED_CONVENTIONS[name], source: 'table' as const })

describe('calibrationFor', () => {
  it('the offline embedders: their own floors, unchanged', () => {
    const hashed = createHashedEmbedder({ dimension: 512 })
    const calibration = calibrationFor(hashed)
    expect(calibration.source).toBe('builtin')
    expect(calibration.forQuery('rotate keys', false, [0.1, 0.2])).toEqual({ floor: hashed.similarityFloor!('rotate keys'), anchorFloor: undefined })
  })

  it('multilingual-e5-small with its convention: the table, per script; without it, or another model: the self rule', () => {
    for (const model of ['openai:multilingual-e5-small-q4#e5-input-type', 'openai:intfloat/multilingual-e5-small#e5', 'local:multilingual-e5-small:mean#e5']) {
      const calibration = calibrationFor({ model, convention: convention('e5') })
      expect(calibration.source, model).toBe('table')
      expect(calibration.forQuery('q', true, []).anchorFloor).toBeGreaterThan(calibration.forQuery('q', false, []).anchorFloor!)
    }
    expect(calibrationFor({ model: 'openai:multilingual-e5-small-q4', convention: convention('none') }).source).toBe('self')
    expect(calibrationFor({ model: 'openai:nomic-embed-text#nomic', convention: convention('nomic') }).source).toBe('self')
    expect(calibrationFor({ model: 'openai:multilingual-e5-small-q4#e5-input-type', convention: convention('e5') }, 'self').source).toBe('self')
  })

  it('an embedder with neither floors nor a convention: no floor, as before', () => {
    expect(calibrationFor({ model: 'test' }).forQuery('q', false, [0.5])).toEqual({ floor: undefined, anchorFloor: undefined })
  })
})

describe('the self-calibration rule', () => {
  it('puts its floors and margins at fixed standard deviations over the median, every result on its own evidence', () => {
    const list = [0.7, 0.72, 0.74, 0.76, 0.78]
    const sd = Math.sqrt(list.reduce((s, x) => s + (x - 0.74) ** 2, 0) / list.length)
    const c = selfCalibrated('q', false, list)
    expect(c.background).toBeCloseTo(0.74, 10)
    expect(c.floor).toBeCloseTo(0.74 + SELF_CALIBRATION.floor * sd, 10)
    expect(c.anchorFloor).toBeCloseTo(0.74 + SELF_CALIBRATION.anchor * sd, 10)
    expect(c.corroboratedFloor).toBeCloseTo(0.74 + SELF_CALIBRATION.corroborated * sd, 10)
    expect(c.margins!.meaning).toBeCloseTo(SELF_CALIBRATION.meaning * sd, 10)
    expect(c.strictAnchor).toBe(true)
    expect(selfCalibrated('q', false, [])).toEqual({ floor: undefined, anchorFloor: undefined })
  })
})

describe('injections with e5', () => {
  it('are judged by the injection bar in place of the answer check for e5 only (its bar was fitted on the rules alone)', () => {
    expect(injectionReplacesAnswer('openai:multilingual-e5-small-q4#e5-input-type')).toBe(true)
    expect(injectionReplacesAnswer('use-lite+hashed-v2-512')).toBe(false)
    expect(injectionReplacesAnswer('hashed-ngram-v2-512')).toBe(false)
  })
})
