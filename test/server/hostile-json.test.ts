/**
 * Hostile JSON over real HTTP (#15.4): input nested past 32 levels, NUL characters in any
 * text field or field name, and 10,000-deep values are refused with 400 `validation_error`
 * naming the field, on every write endpoint; nothing is stored, and what is stored stays
 * readable back by any JSON parser. The MCP tools refuse the same input as a tool error.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, errorOf, openTestHub, type Client, type TestHub } from './helpers.js'

let t: TestHub
let api: Client
let url: string
let entryId: string

/** `{"a":{"a":…{"a":leaf}}}` nested `depth` objects deep, built as text (no recursion anywhere). */
function nestedText(depth: number, leaf = '1'): string {
  return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth)
}

beforeAll(async () => {
  t = await openTestHub({ embedder: { provider: 'hashed' } })
  const server = await t.start()
  url = server.url
  api = client(url)
  const saved = await api.post('/api/knowledge', { task: 'Rotate logs with logrotate', content: 'copytruncate keeps the handle', types: ['tool'] })
  expect(saved.status, saved.text).toBe(201)
  entryId = saved.body.id
})

afterAll(async () => {
  await t.close()
})

/** Asserts a 400 validation_error whose message names `field`. */
function refused(response: { status: number; text: string } & Parameters<typeof errorOf>[0], field: string): void {
  expect(response.status, response.text).toBe(400)
  const error = errorOf(response)
  expect(error.code).toBe('validation_error')
  expect(error.message).toContain(field)
}

describe('hostile JSON', () => {
  it('refuses a NUL in any text field of every write, naming the field, and stores nothing', async () => {
    const before = (await api.get('/api/knowledge')).body.total ?? (await api.get('/api/knowledge')).body.count
    refused(await api.post('/api/knowledge', { task: 'a\u0000b', content: 'c', types: ['tool'] }), 'task')
    refused(await api.post('/api/knowledge', { task: 'a', content: 'c\u0000', types: ['tool'] }), 'content')
    refused(await api.post('/api/knowledge', { task: 'a', content: 'c', types: ['tool'], tags: { domain: ['x\u0000'] } }), 'tags.domain.0')
    refused(await api.put(`/api/knowledge/${entryId}`, { add_helpful_case: { note: 'n\u0000' } }), 'add_helpful_case.note')
    refused(
      await api.post('/api/knowledge/batch_update', { feedback_list: [{ knowledge_id: entryId, is_helpful: true, case: { 'k\u0000': 1 } }] }),
      'feedback_list.0.case',
    )
    refused(await api.patch(`/api/knowledge/${entryId}`, { content: 'new\u0000' }), 'content')
    refused(await api.get(`/api/knowledge/search?q=${encodeURIComponent('log\u0000rotate')}`), 'q')
    refused(await api.post('/api/resource', { id: 'hostile-nul', title: 't', body: 'b\u0000' }), 'body')
    refused(await api.post('/api/resource', { id: 'hostile-nul', title: 't', secure_body: 's\u0000' }), 'secure_body')
    const after = (await api.get('/api/knowledge')).body.total ?? (await api.get('/api/knowledge')).body.count
    expect(after).toBe(before)
    expect((await api.get('/api/resource/hostile-nul')).status).toBe(404)
    const entry = await api.get(`/api/knowledge/${entryId}`)
    expect(entry.body.content).toBe('copytruncate keeps the handle')
    expect(entry.body.eval.helpful_count ?? entry.body.eval.helpful).toBe(0)
  })

  it('refuses feedback cases, batch cases and metadata nested past 32 levels, and 10,000 deep, with 400', async () => {
    for (const depth of [33, 4_000, 10_000]) {
      const single = await api.put(`/api/knowledge/${entryId}`, `{"add_harmful_case":${nestedText(depth)}}`)
      refused(single, 'nested deeper than 32')
      const batch = await api.post(
        '/api/knowledge/batch_update',
        `{"feedback_list":[{"knowledge_id":"${entryId}","is_helpful":false,"case":${nestedText(depth)}}]}`,
      )
      refused(batch, 'nested deeper than 32')
      const resource = await api.post('/api/resource', `{"id":"hostile-deep","title":"t","metadata":${nestedText(depth)}}`)
      refused(resource, 'nested deeper than 32')
    }
    const entry = await api.get(`/api/knowledge/${entryId}`)
    expect(entry.status).toBe(200)
    expect(entry.body.eval.harmful_count ?? entry.body.eval.harmful).toBe(0)
  })

  it('keeps accepting nesting within the limit, and what it stores parses back', async () => {
    const ok = await api.put(`/api/knowledge/${entryId}`, `{"add_helpful_case":${nestedText(20, '"deep but fine"')}}`)
    expect(ok.status, ok.text).toBe(200)
    const listed = await api.get('/api/knowledge')
    expect(listed.status).toBe(200)
    expect(() => JSON.parse(listed.text)).not.toThrow()
  })

  it('answers a NUL in MCP tool arguments with a tool error naming the field, not an internal error', async () => {
    const mcp = new McpClient({ name: 'knowhub-hostile-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)))
    try {
      const result = (await mcp.callTool({ name: 'knowledge_save', arguments: { task: 'x\u0000y', content: 'c', types: ['tool'] } })) as CallToolResult
      expect(result.isError).toBe(true)
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
      expect(text).toContain('validation_error')
      expect(text).toContain('task')
    } finally {
      await mcp.close()
    }
  })
})
