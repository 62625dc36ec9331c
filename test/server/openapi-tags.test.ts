/**
 * Swagger (`/docs`) groups the routes by area (issue 42): every operation of the OpenAPI
 * document carries the tags of its area — knowledge, resources, packs, agents, admin, users —
 * declared once at the top with a description; none is left in Swagger UI's "default" group, and
 * every area holds at least one operation. The same grouping in Chromium is in
 * test/dashboard/browser.test.ts ("renders the API reference at /docs").
 */
import { describe, expect, it } from 'vitest'
import { API_AREAS, areasOf, openApiDocument } from '../../src/server/openapi.js'

const METHODS = ['get', 'put', 'post', 'patch', 'delete']

describe('OpenAPI tags', () => {
  const doc = openApiDocument('0.0.0') as ReturnType<typeof openApiDocument> & { tags?: Array<{ name: string; description: string }> }
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, tags: (operation as { tags?: string[] }).tags })),
  )

  it('declares the six areas, each described, in order', () => {
    expect(doc.tags?.map((t) => t.name)).toEqual(['knowledge', 'resources', 'packs', 'agents', 'admin', 'users'])
    for (const tag of doc.tags ?? []) expect(tag.description.length, tag.name).toBeGreaterThan(20)
  })

  it('tags every operation with declared areas only, and every area has operations', () => {
    expect(operations.length).toBeGreaterThan(40)
    const declared = new Set(API_AREAS.map((a) => a.name))
    for (const { route, tags } of operations) {
      expect(tags?.length, route).toBeGreaterThan(0)
      for (const tag of tags ?? []) expect(declared.has(tag as never), `${route}: ${tag}`).toBe(true)
    }
    for (const area of declared) expect(operations.filter((o) => o.tags?.includes(area)).length, area).toBeGreaterThan(0)
  })

  it('puts each path where a reader looks for it', () => {
    expect(areasOf('/api/knowledge/search')).toEqual(['knowledge'])
    expect(areasOf('/api/knowledge/folder/sync')).toEqual(['knowledge'])
    expect(areasOf('/api/resource/{id}')).toEqual(['resources'])
    expect(areasOf('/api/secret-reads')).toEqual(['resources'])
    expect(areasOf('/api/agents/{agent}/compact')).toEqual(['agents'])
    expect(areasOf('/api/goals')).toEqual(['agents'])
    expect(areasOf('/mcp')).toEqual(['agents', 'packs'])
    expect(areasOf('/api/tokens/{id}/revoke')).toEqual(['admin'])
    expect(areasOf('/api/principals/{principal}')).toEqual(['admin'])
    expect(areasOf('/api/me')).toEqual(['users'])
    expect(areasOf('/api/users/{id}/profile')).toEqual(['users'])
  })
})
