/**
 * The database backends the suite runs on, from KNOWHUB_TEST_BACKENDS (comma-separated;
 * default: all three). `.ci/run` asks for all three; a developer without pgvector can run
 * `KNOWHUB_TEST_BACKENDS=pglite,postgres npm test`. Nothing is skipped silently: a listed
 * backend that is not there fails the whole run in global-setup.ts with a message.
 *
 * - `pglite`: the embedded database in a temp dir (with pgvector; no HNSW index: vectors are scanned exactly).
 * - `postgres`: a PostgreSQL 15 server database where the vector extension is NOT created
 *   (its owner may not create it): vectors are `real[]` and searched exactly.
 * - `pgvector`: a database on the same server with the vector extension: `vector(N)` + HNSW.
 */
export const ALL_BACKENDS = ['pglite', 'postgres', 'pgvector'] as const
export type Backend = (typeof ALL_BACKENDS)[number]

/**
 * The role that owns the `postgres` backend's databases (created by global-setup.ts): no
 * superuser, so CREATE EXTENSION vector is refused to it and KnowHub falls back to `real[]`,
 * as on a server without pgvector. The password only matters on a KNOWHUB_TEST_PG_URL server
 * that asks for one.
 */
export const NO_EXTENSION_ROLE = { name: 'knowhub_app', password: 'knowhub_app' } as const

/** Backends the single-backend tests need whatever the list says. */
const REQUIRED: readonly Backend[] = ['pglite', 'postgres']

/** Parses KNOWHUB_TEST_BACKENDS; throws on an unknown name or a missing required backend. */
export function testBackends(env: NodeJS.ProcessEnv = process.env): Backend[] {
  const raw = env.KNOWHUB_TEST_BACKENDS?.trim()
  if (!raw) return [...ALL_BACKENDS]
  const names = raw.split(',').map((name) => name.trim())
  for (const name of names) {
    if (!(ALL_BACKENDS as readonly string[]).includes(name)) {
      throw new Error(`KNOWHUB_TEST_BACKENDS: unknown backend "${name}" (known: ${ALL_BACKENDS.join(', ')})`)
    }
  }
  for (const name of REQUIRED) {
    if (!names.includes(name)) throw new Error(`KNOWHUB_TEST_BACKENDS must include ${REQUIRED.join(' and ')} (got "${raw}")`)
  }
  return ALL_BACKENDS.filter((name) => names.includes(name))
}

/** The PostgreSQL backends in the list. */
export function serverBackends(backends: readonly Backend[]): Exclude<Backend, 'pglite'>[] {
  return backends.filter((name): name is Exclude<Backend, 'pglite'> => name !== 'pglite')
}
