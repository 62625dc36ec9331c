/**
 * `knowhub start --embed-threads N` (docs/configuration.md, "Embedding threads"): the sentence
 * embedder's model runs in N threads, which the server's metrics show; a bad N, or the flag with
 * an embedder that has no model threads, is refused before anything listens.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, useCliEnv } from '../helpers/cli.js'
import { startKnowHubProcess } from '../helpers/knowhub-process.js'

describe('knowhub start --embed-threads', () => {
  describe('refusals', () => {
    useCliEnv('embed-threads', { KNOWHUB_EMBEDDER: 'hashed' })

    it('refuses a count that is not 1-64', async () => {
      const run = await runCli('start', '--port', '0', '--embed-threads', '0')
      expect(run.code).not.toBe(0)
      expect(run.stderr).toContain('--embed-threads must be an integer 1-64, got "0"')
      expect(run.stdout).not.toContain('listening')
    })

    it('refuses it with an embedder that has no model threads, and says which one is configured', async () => {
      const run = await runCli('start', '--port', '0', '--embed-threads', '2')
      expect(run.code).not.toBe(0)
      expect(run.stderr).toContain("--embed-threads sets the threads of the sentence embedder's model; the configured embedder is hashed")
      expect(run.stdout).not.toContain('listening')
    })
  })

  it('runs the sentence model in that many threads, as the metrics show', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-embed-threads-'))
    const server = await startKnowHubProcess({
      env: { KNOWHUB_DATA_DIR: join(dir, 'data'), KNOWHUB_EMBEDDER: 'sentence', KNOWHUB_EMBED_THREADS: '1' },
      args: ['--embed-threads', '2'],
      timeoutMs: 120_000,
    })
    try {
      // The model loads in every thread once the server listens (the warm-up).
      let body = ''
      for (const started = Date.now(); Date.now() - started < 120_000; await new Promise((resolve) => setTimeout(resolve, 200))) {
        body = await (await fetch(`${server.url}/metrics`)).text()
        if (body.includes('knowhub_embed_threads{state="running"} 2')) break
      }
      // The flag wins over KNOWHUB_EMBED_THREADS.
      expect(body).toContain('knowhub_embed_threads{state="configured"} 2')
      expect(body).toContain('knowhub_embed_threads{state="running"} 2')
    } finally {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
