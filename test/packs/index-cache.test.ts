/**
 * The pack index cache: bounded (entries, bytes), re-checked files in a
 * long-lived process, and shared by the pack tools across calls and across the
 * toolkits or MCP servers a server builds per request.
 */
import { cp, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMcpServer } from '../../src/mcp/index.js'
import { PackIndex, PackIndexCache, discoverPacks, loadPack, type LoadedPack } from '../../src/packs/index.js'
import type { KnowHubBackend } from '../../src/core/backend.js'
import { createToolkit, toolPackIndexCache } from '../../src/tools/index.js'
import { PROJECT_PACKS, knowledge, tempDir, writeTree } from './helpers.js'

// The pack tools never touch the knowledge backend.
const NO_BACKEND = {} as KnowHubBackend

async function copyPack(dir: string, name: string): Promise<LoadedPack> {
  await cp(join(PROJECT_PACKS, name), join(dir, name), { recursive: true })
  const loaded = await loadPack(join(dir, name), { scope: 'project' })
  if (!loaded.ok) throw new Error(`${name} did not load`)
  return loaded.pack
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('PackIndexCache', () => {
  it('keeps at most maxEntries indexes, dropping the least recently used', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const packs: LoadedPack[] = []
      for (const name of ['a', 'b', 'c']) {
        await writeTree(dir, { [`${name}/KNOWLEDGE.md`]: knowledge({ name }), [`${name}/compiled/briefing.md`]: `# ${name}\n\nText of ${name}.\n` })
        const loaded = await loadPack(join(dir, name))
        if (loaded.ok) packs.push(loaded.pack)
      }
      const [a, b, c] = packs as [LoadedPack, LoadedPack, LoadedPack]
      const cache = new PackIndexCache({ maxEntries: 2 })
      const first = await cache.get(a)
      await cache.get(b)
      expect(await cache.get(a)).toBe(first) // a is now the most recently used
      await cache.get(c)
      expect(cache.size).toBe(2)
      expect(cache.peek(b)).toBeUndefined()
      expect(await cache.peek(a)).toBe(first)

      const small = new PackIndexCache({ maxBytes: 1 })
      await small.get(a)
      await small.get(b)
      expect(small.size).toBe(1) // the newest is kept even when alone over the bound
      expect(small.peek(b)).toBeDefined()
    } finally {
      await cleanup()
    }
  })

  it('with revalidateMs, a changed, added or removed file rebuilds the index; unchanged files reuse it', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const pack = await copyPack(dir, 'acme-product-brief')
      const build = vi.spyOn(PackIndex, 'build')
      const cache = new PackIndexCache({ revalidateMs: 0 })
      const first = await cache.get(pack)
      expect(await cache.get(pack)).toBe(first)
      expect(build).toHaveBeenCalledTimes(1)

      const pricing = join(dir, 'acme-product-brief', 'compiled', 'splits', 'acme-product-brief', 'pricing.md')
      await writeFile(pricing, (await readFile(pricing, 'utf8')).replace('99 USD', '119 USD per seat'))
      const second = await cache.get(pack)
      expect(second).not.toBe(first)
      expect(second.sections.some((s) => s.text.includes('119 USD per seat'))).toBe(true)
      expect(build).toHaveBeenCalledTimes(2)

      await writeFile(join(dir, 'acme-product-brief', 'compiled', 'new-view.md'), '# New view\n\nAdded later.\n')
      const third = await cache.get(pack)
      expect(third.files.has('compiled/new-view.md')).toBe(true)
      // Concurrent callers share one check.
      const [x, y] = await Promise.all([cache.get(pack), cache.get(pack)])
      expect(x).toBe(third)
      expect(y).toBe(third)
      expect(build).toHaveBeenCalledTimes(3)

      // Without revalidateMs (a session re-checks in refresh()), nothing is re-checked.
      const manual = new PackIndexCache()
      const kept = await manual.get(pack)
      await writeFile(pricing, 'changed again')
      expect(await manual.get(pack)).toBe(kept)
    } finally {
      await cleanup()
    }
  })
})

describe('the pack tools share one index cache', () => {
  it('repeated knowledge_pack_resolve calls build each pack index once, also across toolkits built per request', async () => {
    const packs = (await discoverPacks({ projectDir: join(PROJECT_PACKS, '..', '..') })).packs
    const build = vi.spyOn(PackIndex, 'build')
    const kit = createToolkit({ backend: NO_BACKEND, packs })
    const ask = { task: 'What does the Team plan cost?', packs: ['acme-product-brief'], budget: 2000 }
    const first = await kit.callTool('knowledge_pack_resolve', ask)
    const second = await kit.callTool('knowledge_pack_resolve', ask)
    expect(second.text).toBe(first.text)
    expect(build).toHaveBeenCalledTimes(1)

    // A server that builds a toolkit (or an MCP server) per request passes one cache.
    const shared = toolPackIndexCache()
    await createToolkit({ backend: NO_BACKEND, packs, packIndexCache: shared }).callTool('knowledge_pack_resolve', ask)
    await createToolkit({ backend: NO_BACKEND, packs, packIndexCache: shared }).callTool('knowledge_pack_resolve', ask)
    expect(build).toHaveBeenCalledTimes(2)

    for (let i = 0; i < 2; i++) {
      const server = createMcpServer({ backend: NO_BACKEND, packs, packIndexCache: shared })
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      await server.connect(serverSide)
      const client = new Client({ name: 'knowhub-test', version: '1.0.0' })
      await client.connect(clientSide)
      const result = (await client.callTool({ name: 'knowledge_pack_resolve', arguments: ask })) as CallToolResult
      expect(result.isError).toBeFalsy()
      await client.close()
    }
    expect(build).toHaveBeenCalledTimes(2)
  })

  it('knowledge_pack_resolve takes a grounding policy', async () => {
    const packs = (await discoverPacks({ projectDir: join(PROJECT_PACKS, '..', '..') })).packs
    const kit = createToolkit({ backend: NO_BACKEND, packs })
    const result = await kit.callTool('knowledge_pack_resolve', { task: 'What are the support hours?', packs: ['hybrid-support-ops'], grounding: 'required' })
    const data = result.data as { packs: { grounding: string; citation_gaps: string[] }[] }
    expect(data.packs[0]?.grounding).toBe('required')
    expect(result.text).toContain('grounding="required"')
    await expect(kit.callTool('knowledge_pack_resolve', { task: 'x', grounding: 'sometimes' })).rejects.toMatchObject({ code: 'validation_error' })
  })
})
