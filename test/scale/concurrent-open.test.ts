/**
 * Two hubs opening one fresh PostgreSQL database at the same moment (two servers started
 * together, `knowhub start --workers N`): the migrations, the vector extension and the vector
 * column are decided once, under the migration lock, and both hubs agree — on pgvector a
 * `vector(N)` column with its HNSW index, never a `real[]` column that one of them made after
 * losing the `CREATE EXTENSION` race (which failed the HNSW index with "operator class
 * vector_cosine_ops does not accept data type real[]"). Repeated on new databases, since a race
 * shows only sometimes.
 */
import { describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import type { Principal } from '../../src/core/principal.js'
import { SERVER_BACKENDS, createTestDatabase } from '../helpers/stores.js'

const ROUNDS = 4
const SECRET_KEY = Buffer.alloc(32, 7).toString('base64')

describe.each(SERVER_BACKENDS)('two hubs opening one fresh database at once (%s)', (backend) => {
  it(`agree on the vector column, ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const database = await createTestDatabase(backend)
      const open = (): Promise<KnowHub> =>
        openKnowHub({ databaseUrl: database.options.databaseUrl, embedder: { provider: 'hashed' }, secrets: { key: SECRET_KEY } }, { packs: false })
      const opened = await Promise.allSettled([open(), open(), open()])
      const hubs = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
      try {
        const failures = opened.flatMap((result) => (result.status === 'rejected' ? [String((result.reason as Error).message)] : []))
        expect(failures, `round ${round}`).toEqual([])
        const backends = hubs.map((hub) => (hub.store.vectorState()?.status === 'ready' ? hub.store.vectorState() : undefined))
        const wanted = backend === 'pgvector' ? 'pgvector' : 'array'
        for (const state of backends) expect(state && state.status === 'ready' ? state.info.backend : state, `round ${round}`).toBe(wanted)
        // Every hub can write and search (the dialect each chose matches the column).
        const principal: Principal = { user: 'alice', org: 'acme', permissions: ['read', 'write'] }
        await hubs[0]!.knowledge.save(
          { task: `round ${round} login`, content: 'Log in with the saved cookie', types: ['tool'], scopes: ['user:alice'] },
          principal,
        )
        for (const hub of hubs) {
          const found = await hub.knowledge.search({ q: 'login cookie', top_k: 5, min_score: 0 }, principal)
          expect(found.count, `round ${round}`).toBe(1)
        }
      } finally {
        await Promise.all(hubs.map((hub) => hub.close()))
        await database.drop()
      }
    }
  })
})
