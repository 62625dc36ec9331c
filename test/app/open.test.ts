/**
 * The composition root: the `search` config reaches the store and the service;
 * `hub.packs` finds packs where the caller says, lazily, or none.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { sql } from '../../src/store/sql.js'
import { createTestDatabase } from '../helpers/stores.js'
import { SCOPES } from '../packs/helpers.js'

describe('openKnowHub search settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-open-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const base = { embedder: { provider: 'hashed' }, secrets: { key: Buffer.alloc(32, 1).toString('base64') } }

  it('uses the in-memory full-text index on the embedded database by default, SQL when configured', async () => {
    for (const [fulltext, indexed] of [
      [undefined, true],
      ['memory', true],
      ['sql', false],
    ] as const) {
      const hub = await openKnowHub({ ...base, dataDir: join(dir, String(fulltext)), ...(fulltext ? { search: { fulltext } } : {}) })
      try {
        await hub.knowledge.save({ task: 'selenium login', content: 'use a proxy', types: ['tool'] }, hub.config.principal)
        expect(typeof (await hub.store.knowledge.searchGeneration()) === 'number', String(fulltext)).toBe(indexed)
        expect((await hub.knowledge.search({ q: 'selenium' }, hub.config.principal)).count).toBe(1)
      } finally {
        await hub.close()
      }
    }
  })

  it('searches in SQL on a PostgreSQL server by default; the in-memory index is an option there (issue 32)', async () => {
    const database = await createTestDatabase('postgres')
    const readers = async (hub: KnowHub) => (await hub.store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge_change_reader`))[0]!.n
    try {
      const hub = await openKnowHub({ ...base, databaseUrl: database.options.databaseUrl })
      expect(await hub.store.knowledge.searchGeneration()).toBeUndefined()
      expect(await readers(hub)).toBe(0)
      const memory = await openKnowHub({ ...base, databaseUrl: database.options.databaseUrl, search: { fulltext: 'memory' } })
      // Registered as a reader of the change log; no response cache (no generation) on a server.
      expect(await readers(hub)).toBe(1)
      expect(await memory.store.knowledge.searchGeneration()).toBeUndefined()
      await memory.close()
      expect(await readers(hub)).toBe(0)
      await hub.close()
    } finally {
      await database.drop()
    }
  })

  it('rejects an unknown full-text mode with the field path', async () => {
    await expect(openKnowHub({ ...base, dataDir: join(dir, 'bad'), search: { fulltext: 'elastic' } })).rejects.toMatchObject({ code: 'validation_error' })
  })
})

describe('openKnowHub packs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-open-packs-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const base = { embedder: { provider: 'hashed' }, secrets: { key: Buffer.alloc(32, 1).toString('base64') } }

  it('discovers the project packs on first use, with the config and flags merged', async () => {
    const hub = await openKnowHub({ ...base, dataDir: join(dir, 'found') }, { packs: { project: join(SCOPES, 'project'), user: false } })
    try {
      expect(hub.packs.available()).toEqual([])
      const { items } = await hub.packs.catalog()
      expect(items.length).toBeGreaterThan(0)
      expect(items.every((item) => item.scope === 'project')).toBe(true)
      expect(hub.packs.available().map((p) => p.item.name)).toEqual(items.map((item) => item.name))
    } finally {
      await hub.close()
    }
  })

  it('has no packs at all when told so', async () => {
    const hub = await openKnowHub({ ...base, dataDir: join(dir, 'none') }, { packs: false })
    try {
      expect((await hub.packs.discover()).packs).toEqual([])
      await expect(hub.packs.show('anything')).rejects.toMatchObject({ code: 'not_found' })
    } finally {
      await hub.close()
    }
  })
})
