/** The OpenAI stub is shared with later LLM features: pin its chat behaviour too. */
import { describe, expect, it } from 'vitest'
import { startOpenAIStub } from '../helpers/openai-stub.js'

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

describe('OpenAI stub server', () => {
  it('answers chat completions with the responder, as JSON or as server-sent events', async () => {
    await using stub = await startOpenAIStub({ chat: (request) => `echo: ${String(request.messages.at(-1)?.content)}` })
    const response = await post(`${stub.url}/chat/completions`, { model: 'stub-chat', messages: [{ role: 'user', content: 'hi' }] })
    expect(response.status).toBe(200)
    const json = (await response.json()) as { object: string; choices: Array<{ message: { role: string; content: string } }> }
    expect(json.object).toBe('chat.completion')
    expect(json.choices[0]!.message).toEqual({ role: 'assistant', content: 'echo: hi' })

    const streamed = await post(`${stub.url}/chat/completions`, { model: 'stub-chat', stream: true, messages: [{ role: 'user', content: 'yo' }] })
    expect(streamed.headers.get('content-type')).toBe('text/event-stream')
    const events = (await streamed.text()).split('\n\n').filter(Boolean)
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(JSON.parse(events[0]!.slice('data: '.length)).choices[0].delta.content).toBe('echo: yo')

    stub.setChat(() => ({ custom: true }))
    expect(await (await post(`${stub.url}/chat/completions`, { model: 'm', messages: [] })).json()).toEqual({ custom: true })
    expect(stub.requestsTo('/v1/chat/completions').map((r) => (r.body as { model: string }).model)).toEqual(['stub-chat', 'stub-chat', 'm'])
  })

  it('reports errors like OpenAI: no responder, bad body, unknown route, missing key', async () => {
    await using stub = await startOpenAIStub()
    expect((await post(`${stub.url}/chat/completions`, { model: 'm', messages: [] })).status).toBe(501)
    expect((await post(`${stub.url}/embeddings`, { input: 'no model' })).status).toBe(400)
    expect((await post(`${stub.url}/nothing`, {})).status).toBe(404)
    expect(((await (await fetch(`${stub.url}/models`)).json()) as { data: unknown[] }).data).toHaveLength(2)

    await using locked = await startOpenAIStub({ apiKey: 'k' })
    const denied = await post(`${locked.url}/embeddings`, { model: 'm', input: 'x' })
    expect(denied.status).toBe(401)
    expect(((await denied.json()) as { error: { message: string } }).error.message).toMatch(/API key/)
  })

  it('embeds a single string input and honours `dimensions`', async () => {
    await using stub = await startOpenAIStub({ dimension: 8 })
    const json = (await (await post(`${stub.url}/embeddings`, { model: 'm', input: 'one', dimensions: 12 })).json()) as {
      data: Array<{ index: number; embedding: number[] }>
    }
    expect(json.data).toHaveLength(1)
    expect(json.data[0]!.embedding).toHaveLength(12)
  })
})
