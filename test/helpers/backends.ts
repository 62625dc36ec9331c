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

/**
 * The server test files (test/server/) whose behaviour depends on the database backend: they run
 * once on PGlite like every file, then again on each PostgreSQL backend of the run
 * (vitest.config.ts). Every other server test file runs once, on PGlite: its behaviour is the
 * same whatever the database, and the store and service suites cover that layer per backend.
 * docs/testing.md gives the reason for each file; test/suite/backends.test.ts keeps the two
 * in step.
 */
export const SERVER_TESTS_PER_BACKEND = [
  // The lock file and its local key exist on the embedded database only; /api/status names the backend.
  'test/server/admin.test.ts',
  // A database failure answers 500 without internals: the driver's errors differ (pg vs PGlite).
  'test/server/errors.test.ts',
  // Scope visibility is enforced in each backend's SQL (exact vectors, real[] or HNSW with a filter).
  'test/server/isolation.test.ts',
  // The CLI beside the server holding the folder (PGlite) or against it through --url (PostgreSQL).
  'test/server/reown.test.ts',
  // Secrets are read by a scoped query, and error paths carry the driver's messages into logs.
  'test/server/secrets.test.ts',
  // The tenancy suite (#27): every route, tool and dashboard API against each backend's SQL.
  'test/server/tenancy.test.ts',
  // Stored agents (#27): per-org documents, versions and their scopes in each backend's SQL.
  'test/server/agent-memory.test.ts',
  // The audit of secret reads (#27): who sees which record is a WHERE clause in each backend's SQL.
  'test/server/secret-reads.test.ts',
  // /metrics (#32): the database pool's series exist on PostgreSQL only.
  'test/server/metrics.test.ts',
  // Forgetting a user (#31): one transaction and the rewrite of each backend's table files, grepped afterwards.
  'test/server/forget.test.ts',
] as const
