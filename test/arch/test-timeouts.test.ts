/**
 * Timeouts in tests are sized for a loaded two-core machine (issue 42: `slim-llm.test.ts` shared
 * one LLM with a 300 ms timeout between its success cases and its timeout case, and at load 5-7
 * the stub's answer came late, so a dry run planned nothing). A timeout under a second is for a
 * call that is meant to time out: it must sit in a test or on a provider made for that (its name,
 * or a comment within three lines above, says timeout, hang, no answer or abort), never on a
 * provider that success cases share.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const SHORT_MS = 1_000
const MEANT = /\/\/.*\b(time(s|d)? ?out|timeout|hangs?|no answer|aborts?)\b|\bimpatient\b|\bconst short\b/i
/** A test whose title says it is about a timeout. */
const TIMEOUT_TEST = /^\s*(it|test)(\.each\([\s\S]*\))?\(['"`][^'"`]*(time(s|d)? ?out|timeout|no answer|abort|outlives)/i

/** Every .ts file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

/** The short timeouts of a file's text that nothing around them marks as meant to fire. */
export function unmarkedShortTimeouts(text: string): number[] {
  const lines = text.split('\n')
  return lines.flatMap((line, i) => {
    const ms = /timeoutMs:\s*([0-9_]+)/.exec(line)?.[1]
    if (ms === undefined || Number(ms.replaceAll('_', '')) >= SHORT_MS) return []
    if (lines.slice(Math.max(0, i - 3), i + 1).some((near) => MEANT.test(near))) return []
    const test = lines
      .slice(0, i + 1)
      .reverse()
      .find((above) => /^\s*(it|test)(\.each)?\(/.test(above))
    return test !== undefined && TIMEOUT_TEST.test(test) ? [] : [i + 1]
  })
}

describe('timeouts in tests', () => {
  it(`keeps every timeout under ${SHORT_MS} ms to a call meant to time out`, () => {
    const found = files(join(ROOT, 'test'))
      .filter((file) => file !== join(import.meta.dirname, 'test-timeouts.test.ts'))
      .flatMap((file) => unmarkedShortTimeouts(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}:${line}`))
    expect(found).toEqual([])
  })

  it('finds the shared provider of slim-llm.test.ts as it was (4f46e80)', () => {
    const before = `  beforeAll(async () => {
    stub = await startOpenAIStub()
    const embedder = createHashedEmbedder({ dimension: 256 })
    knowledge = await createKnowledgeService({ store, embedder })
    const llm = createOpenAIChat({ url: stub.url, model: 'default', models: { slim: 'slim-model' }, retries: 0, timeoutMs: 300 })`
    expect(unmarkedShortTimeouts(before)).toEqual([5])
  })
})
