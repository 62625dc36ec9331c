/**
 * The tenancy suite (issue 27): every route of the server (walked from its route table), every
 * MCP tool (official client) and every dashboard API, with two orgs — each with an admin, a
 * writer, a read-only token and a secrets reader — plus a hub operator. The cases
 * (tenancy/cases.ts) state the role × action table of docs/server.md, attacks included; each
 * response is scanned for what its caller may not see. It runs once per backend (the vitest
 * projects), one hub and one seed each, and prints the attempts and leaks it counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MCP_CASES, ROUTE_CASES } from './tenancy/cases.js'
import { openWorld, Probe, type World } from './tenancy/world.js'

const backend = process.env.KNOWHUB_TEST_HUB_BACKEND ?? 'pglite'
let w: World

beforeAll(async () => {
  w = await openWorld()
}, 180_000)

afterAll(async () => {
  if (w) {
    const counts = (filter: (a: World['attempts'][number]) => boolean) => w.attempts.filter(filter).length
    const leaks = w.attempts.flatMap((a) => a.leaked)
    console.log(
      `tenancy on ${backend}: ${w.attempts.length} attempts (${counts((a) => a.surface === 'api')} API, ${counts((a) => a.surface === 'ui')} dashboard, ` +
        `${counts((a) => a.surface === 'mcp')} MCP; ${counts((a) => a.cross)} cross-org, ${counts((a) => a.data)} with ids in their bodies), ${leaks.length} leaks, ${leaks.filter((l) => l.startsWith('secret:')).length} secret leaks, ` +
        `${Object.keys(ROUTE_CASES).length} routes, ${Object.keys(MCP_CASES).length} MCP tools`,
    )
    const byRoute = new Map<string, number>()
    for (const a of w.attempts) if (a.leaked.length > 0) byRoute.set(a.route, (byRoute.get(a.route) ?? 0) + a.leaked.length)
    if (byRoute.size > 0) console.log(`tenancy leaks by route: ${[...byRoute].map(([route, n]) => `${route} ${n}`).join('; ')}`)
  }
  await w?.t.close()
})

describe(`tenancy on ${backend}`, () => {
  it('has a case for every route of the server and every MCP tool', async () => {
    const routes = w.server.routes.map((r) => `${r.method} ${r.path}`)
    expect(
      routes.filter((r) => !(r in ROUTE_CASES)),
      'routes without a tenancy case (add them to test/server/tenancy/cases.ts)',
    ).toEqual([])
    expect(
      Object.keys(ROUTE_CASES).filter((r) => !routes.includes(r)),
      'cases of routes that do not exist',
    ).toEqual([])
    const tools = [...new Set((await Promise.all(w.actors.map(async (a) => (await a.mcp.listTools()).tools.map((t) => t.name)))).flat())]
    expect(
      tools.filter((t) => !(t in MCP_CASES)),
      'MCP tools without a tenancy case',
    ).toEqual([])
  })

  for (const route of Object.keys(ROUTE_CASES)) {
    it(route, async () => {
      await ROUTE_CASES[route]!(new Probe(w, route), w)
    })
  }

  for (const tool of Object.keys(MCP_CASES)) {
    it(`MCP ${tool}`, async () => {
      await MCP_CASES[tool]!(new Probe(w, `MCP ${tool}`), w)
    })
  }

  it('leaked nothing', () => {
    expect(w.attempts.length).toBeGreaterThan(500)
    // Issue 39: imports, folders and syncs naming ids inside their bodies are walked too.
    expect(w.attempts.filter((a) => a.data).length).toBeGreaterThan(60)
    expect(w.attempts.flatMap((a) => a.leaked)).toEqual([])
  })
})
