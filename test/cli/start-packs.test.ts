/**
 * `knowhub start` offers the packs the composition root's packs service finds:
 * the banner counts them and the MCP tools at /mcp include the pack tools;
 * `--no-packs` offers none. A real server process on a temporary embedded database.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'
import { SCOPES } from '../packs/helpers.js'

const root = mkdtempSync(join(tmpdir(), 'knowhub-start-packs-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

async function toolNames(server: KnowHubProcess): Promise<string[]> {
  const client = new Client({ name: 'knowhub-start-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url)))
  try {
    return (await client.listTools()).tools.map((tool) => tool.name)
  } finally {
    await client.close()
  }
}

describe('knowhub start and knowledge packs', () => {
  const env = (name: string): Record<string, string> => ({
    KNOWHUB_DATA_DIR: join(root, name),
    // An empty home: only the project's packs are found.
    HOME: join(root, `${name}-home`),
    KNOWHUB_EMBEDDER: 'hashed',
    KNOWHUB_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'),
  })

  it('finds the project packs at start and offers the pack tools at /mcp', async () => {
    const server = await startKnowHubProcess({ env: env('with'), packs: true, args: ['--project', join(SCOPES, 'project')] })
    try {
      const banner = server.stdout.join('\n')
      const count = Number(/with (\d+) knowledge packs?/.exec(banner)?.[1])
      expect(count, banner).toBeGreaterThan(0)
      const names = await toolNames(server)
      expect(names).toContain('knowledge_pack_resolve')
      expect(names).toContain('knowledge_search')
    } finally {
      await server.stop()
    }
  })

  it('offers no pack tools with --no-packs', async () => {
    const server = await startKnowHubProcess({ env: env('without') })
    try {
      expect(server.stdout.join('\n')).toMatch(/with 0 knowledge packs/)
      const names = await toolNames(server)
      expect(names.filter((name) => name.startsWith('knowledge_pack'))).toEqual([])
      expect(names).toContain('knowledge_search')
    } finally {
      await server.stop()
    }
  })
})
