/**
 * The contradiction set on the real multilingual model (issues 31 and 40): Chinese cases whose
 * questions paraphrase their facts — the misses of the offline embedders (安卓 / Android,
 * 住哪儿 / 住在, 老师 / 导师) — run through extraction (the scripted model of bench/contradictions.ts:
 * what a correct model would decide, so the case measures KnowHub) and search with
 * multilingual-e5-small: the new fact first now, the old one first `as_of` before, the replaced one
 * never in the top 5 now; and, as the control that makes the cases worth running, the offline
 * hashed n-grams miss a question of each. One backend: supersession's SQL is tested on all three
 * (test/knowledge/extract-supersede.test.ts); what this adds is the model's reading of the paraphrases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCase } from '../../bench/contradictions.js'
import { loadContradictions, scriptedModel, type ContradictionCase } from '../../bench/contradictions-set.js'
import { openEvalHub, type EvalHub } from '../../src/app/eval.js'
import { LlmConfig } from '../../src/core/config.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createOpenAIEmbedder } from '../../src/embed/openai.js'
import { useModel } from '../helpers/models.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'

const e5 = useModel('embedding')
const CASES = ['zh-constraint-android', 'zh-place-home', 'zh-role-advisor']

describe.skipIf(!e5.available)('the contradiction set with multilingual-e5-small', () => {
  let hub: EvalHub
  let stub: OpenAIStub
  let current: ContradictionCase
  const cases = loadContradictions('zh').filter((c) => CASES.includes(c.id))

  beforeAll(async () => {
    const server = await e5.server()
    stub = await startOpenAIStub({ chat: scriptedModel(() => current, 'supersede') })
    hub = await openEvalHub({
      embedder: await createOpenAIEmbedder({ provider: 'openai', baseUrl: server.url, model: server.model, timeoutMs: 30_000 }),
      llm: LlmConfig.parse({ url: stub.url, model: 'scripted', timeoutMs: 10_000 }),
    })
  }, 120_000)
  afterAll(async () => {
    await hub?.close()
    await stub?.close()
  })

  it.each(CASES)('%s: the new fact now, the old one as of before, nothing stale', async (id) => {
    const c = cases.find((x) => x.id === id)!
    const outcome = await runCase(hub, c, (next) => (current = next))
    expect(outcome).toMatchObject({ superseded: true, now_hit: true, before_hit: true, stale: false })
  })

  it('the control: the offline hashed n-grams miss a question of every one of these cases (they read characters, not meaning)', async () => {
    const offline = await openEvalHub({
      embedder: createHashedEmbedder({ dimension: 512 }),
      llm: LlmConfig.parse({ url: stub.url, model: 'scripted', timeoutMs: 10_000 }),
    })
    try {
      for (const c of cases) {
        const outcome = await runCase(offline, c, (next) => (current = next))
        expect(outcome.now_hit && outcome.before_hit, c.id).toBe(false)
      }
    } finally {
      await offline.close()
    }
  })
})
