/**
 * Where a one-shot command's time goes (issue 42): with KNOWHUB_TIMING=1 a command prints one
 * JSON line on stderr with its phases (start, configuration, open, model, command, close: wall
 * and CPU ms) and a search's stages; without it, nothing. And a search in Chinese, which the
 * sentence embedder compares by its hashed part alone, never loads USE lite (it was ~0.4 s of
 * CPU of every one-shot search).
 */
import { describe, expect, it } from 'vitest'
import { createSentenceEmbedder } from '../../src/embed/use.js'
import { runCli, useCliEnv } from '../helpers/cli.js'

useCliEnv('timing', { KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_TIMING: undefined })

const timingOf = (stderr: string) => {
  const line = stderr.split('\n').find((l) => l.startsWith('{"knowhub_timing"'))
  return line ? (JSON.parse(line) as { knowhub_timing: Record<string, unknown> }).knowhub_timing : undefined
}

describe('KNOWHUB_TIMING', () => {
  it('prints the phases of a search and its stages; nothing without it', async () => {
    expect((await runCli('save', '--task', 'Rotate nginx logs', '--content', 'logrotate with copytruncate', '--type', 'tool')).code).toBe(0)
    const quiet = await runCli('search', 'nginx logs')
    expect(quiet.code, quiet.stderr).toBe(0)
    expect(timingOf(quiet.stderr)).toBeUndefined()

    process.env.KNOWHUB_TIMING = '1'
    try {
      const timed = await runCli('search', 'nginx logs')
      expect(timed.code, timed.stderr).toBe(0)
      const timing = timingOf(timed.stderr)
      expect(timing).toBeDefined()
      for (const phase of ['start', 'config', 'open', 'command', 'close', 'total'])
        expect(timing![phase], phase).toEqual({ wall_ms: expect.any(Number), cpu_ms: expect.any(Number) })
      expect(Object.keys(timing!.search_stages_ms as object)).toEqual(expect.arrayContaining(['fulltext', 'embed', 'vector', 'rank', 'total']))
      expect((timing!.open as { wall_ms: number }).wall_ms).toBeGreaterThan(0)
    } finally {
      delete process.env.KNOWHUB_TIMING
    }
  }, 120_000)
})

describe('the sentence embedder warmed for a search', () => {
  it('does not load USE lite for Chinese text, and does for English', async () => {
    const embedder = await createSentenceEmbedder({ threads: 1 })
    try {
      await embedder.warmUp?.(['用户喜欢什么样的编码风格'])
      expect(embedder.ready?.()).toBe(false)
      expect(embedder.poolStats?.()).toBeUndefined()
      await embedder.warmUp?.(['selenium login blocked as a bot'])
      expect(embedder.ready?.()).toBe(true)
    } finally {
      await embedder.close?.()
    }
  }, 120_000)
})
