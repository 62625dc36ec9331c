import { defineConfig } from 'vitest/config'
import { serverBackends, testBackends } from './test/helpers/backends.js'

/**
 * Test files run in two worker processes by default, also on a 2-core machine (vitest's own
 * default there is one): most of the slow files wait on child processes (PostgreSQL, the CLI,
 * Chromium), not on the CPU. KNOWHUB_TEST_WORKERS overrides it.
 *
 * One project runs the whole suite (the store and service suites loop over every backend
 * themselves); the server tests, which open their hub on PGlite, run again once per PostgreSQL
 * backend of the run (test/server/helpers.ts reads KNOWHUB_TEST_HUB_BACKEND).
 */
export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: Number(process.env.KNOWHUB_TEST_WORKERS) || 2,
    projects: [
      { extends: true, test: { name: 'all', include: ['test/**/*.test.ts'] } },
      ...serverBackends(testBackends()).map((backend) => ({
        extends: true as const,
        test: {
          name: `server-on-${backend}`,
          include: ['test/server/**/*.test.ts'],
          // tokens.test.ts loops over the backends itself.
          exclude: ['test/server/tokens.test.ts'],
          env: { KNOWHUB_TEST_HUB_BACKEND: backend },
        },
      })),
    ],
  },
})
