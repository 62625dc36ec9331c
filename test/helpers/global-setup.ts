/**
 * Starts a throwaway PostgreSQL server for the server backends of the suite (see
 * backends.ts), unless KNOWHUB_TEST_PG_URL points at one already, and checks that it can
 * serve every listed backend. Fails loudly when it cannot: no backend is skipped silently.
 */
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { NO_EXTENSION_ROLE, testBackends } from './backends.js'
import { startTempPostgres, type TempPostgres } from './pg-server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string
  }
}

let server: TempPostgres | undefined
/** What ran, said at the start and again after the run: the suite never leaves a backend out silently. */
let summary = ''

async function prepareServer(url: string, needPgvector: boolean, where: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const version = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]!.v
    if (needPgvector) {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'`)
      if (rows[0]?.n !== 1) {
        throw new Error(
          `The pgvector test backend needs the vector extension on the test PostgreSQL server (${where}), and it is not there. ` +
            'Build it (about 35 s, no root, the system PostgreSQL stays as it is): bash .ci/pgvector — or run without that backend: ' +
            'KNOWHUB_TEST_BACKENDS=pglite,postgres npm test. See CONTRIBUTING.md, Tests.',
        )
      }
    }
    const { name, password } = NO_EXTENSION_ROLE
    await client.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${name}') THEN
        CREATE ROLE ${name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}';
      END IF;
    END $$`)
    const vector = needPgvector
      ? (await client.query<{ v: string }>(`SELECT default_version AS v FROM pg_available_extensions WHERE name = 'vector'`)).rows[0]!.v
      : undefined
    return `PostgreSQL ${version} (${where})${vector ? `, pgvector ${vector}` : ''}`
  } finally {
    await client.end()
  }
}

export async function setup(project: TestProject): Promise<void> {
  const backends = testBackends()
  const given = process.env.KNOWHUB_TEST_PG_URL
  if (!given) server = await startTempPostgres()
  const url = given ?? server!.url
  try {
    const pgServer = await prepareServer(url, backends.includes('pgvector'), given ? 'KNOWHUB_TEST_PG_URL' : `started from ${server!.bin}`)
    summary = `KnowHub test backends: ${backends.join(', ')} — ${pgServer}`
    console.log(summary)
  } catch (error) {
    await server?.stop()
    throw error
  }
  project.provide('pgUrl', url)
}

export async function teardown(): Promise<void> {
  await server?.stop()
  if (summary) console.log(`${summary} (the run above)`)
  summary = ''
}
