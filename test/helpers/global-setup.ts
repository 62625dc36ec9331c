/**
 * Starts a throwaway PostgreSQL server for the Postgres half of the store suite,
 * unless KNOWHUB_TEST_PG_URL points at one already. Fails loudly when neither is
 * possible: the Postgres tests are never skipped silently.
 */
import type { TestProject } from 'vitest/node'
import { startTempPostgres, type TempPostgres } from './pg-server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string
  }
}

let server: TempPostgres | undefined

export async function setup(project: TestProject): Promise<void> {
  const given = process.env.KNOWHUB_TEST_PG_URL
  if (given) {
    project.provide('pgUrl', given)
    return
  }
  server = await startTempPostgres()
  project.provide('pgUrl', server.url)
}

export async function teardown(): Promise<void> {
  await server?.stop()
}
