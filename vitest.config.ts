import { defineConfig } from 'vitest/config'
import { SERVER_TESTS_PER_BACKEND, serverBackends, testBackends } from './test/helpers/backends.js'

/**
 * Test files run in two worker processes by default, also on a 2-core machine (vitest's own
 * default there is one): most of the slow files wait on child processes (PostgreSQL, the CLI,
 * Chromium), not on the CPU. KNOWHUB_TEST_WORKERS overrides it.
 *
 * One project runs the whole suite (the store and service suites loop over every backend
 * themselves). The server test files whose behaviour depends on the backend
 * (SERVER_TESTS_PER_BACKEND, test/helpers/backends.ts; docs/testing.md says why for each) open
 * their hub on PGlite there and run again once per PostgreSQL backend of the run
 * (test/server/helpers.ts reads KNOWHUB_TEST_HUB_BACKEND); the other server files run once.
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
          include: [...SERVER_TESTS_PER_BACKEND],
          env: { KNOWHUB_TEST_HUB_BACKEND: backend },
        },
      })),
    ],
  },
})
