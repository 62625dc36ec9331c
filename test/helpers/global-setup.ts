/**
 * Starts a throwaway PostgreSQL server for the server backends of the suite (see
 * backends.ts), unless KNOWHUB_TEST_PG_URL points at one already, and checks that it can
 * serve every listed backend. Fails loudly when it cannot: no backend is skipped silently.
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { NO_EXTENSION_ROLE, testBackends } from './backends.js'
import { startTempPostgres, type TempPostgres } from './pg-server.js'
import { MODEL_SKIPS_DIR } from './models.js'

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
  rmSync(MODEL_SKIPS_DIR, { recursive: true, force: true })
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
  const skipped = modelSkips()
  if (skipped) console.log(skipped)
}

/**
 * One line naming the test files skipped for what this machine lacks, and why: the real models'
 * files (test/helpers/models.ts) and the Python integrations' file when their frameworks' venv is
 * missing; undefined when none was. Only what CI does not require here is skipped and recorded
 * (KNOWHUB_TEST_REQUIRE_MODELS=1, KNOWHUB_TEST_REQUIRE_INTEGRATIONS=1: those files fail instead).
 */
function modelSkips(): string | undefined {
  if (!existsSync(MODEL_SKIPS_DIR)) return undefined
  const rows = new Map<string, { files: Set<string>; why: string }>()
  for (const name of readdirSync(MODEL_SKIPS_DIR)) {
    for (const line of readFileSync(join(MODEL_SKIPS_DIR, name), 'utf8').split('\n')) {
      const [kind, file, why] = line.split('\t')
      if (!kind || !file || !why) continue
      const row = rows.get(kind) ?? { files: new Set<string>(), why }
      row.files.add(file)
      rows.set(kind, row)
    }
  }
  rmSync(MODEL_SKIPS_DIR, { recursive: true, force: true })
  if (rows.size === 0) return undefined
  // 'integrations': the agent frameworks' venv of the Python integrations (test/clients/python-integrations.test.ts).
  const what = (kind: string) => (kind === 'integrations' ? "the integrations' frameworks" : `the ${kind} model`)
  const parts = [...rows].map(([kind, row]) => `${what(kind)} (${row.why}): skipped ${[...row.files].sort().join(', ')}`)
  return `Tests skipped for what this machine lacks (CI requires them): ${parts.join('; ')}`
}
