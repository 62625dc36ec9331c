/**
 * The server's own search latency counters: the durations of the last searches (API,
 * MCP and dashboard alike), kept in a fixed window in memory, summarised as percentiles
 * for the dashboard's overview.
 */
import type { KnowledgeService } from '../../knowledge/service.js'

/** A window of the most recent search durations. */
export interface LatencyWindow {
  record(ms: number): void
  /** Count, p50, p90, p99 and max over the window, in ms (null when empty). */
  summary(): { count: number; p50: number | null; p90: number | null; p99: number | null; max: number | null }
}

/**
 * A ring buffer of the last `size` durations (default 2000).
 * @example
 * const window = createLatencyWindow()
 * window.record(12.5)
 * window.summary().p50 // 12.5
 */
export function createLatencyWindow(size = 2000): LatencyWindow {
  const values = new Float64Array(size)
  let count = 0
  let next = 0
  return {
    record(ms) {
      values[next] = ms
      next = (next + 1) % size
      count = Math.min(count + 1, size)
    },
    summary() {
      if (count === 0) return { count: 0, p50: null, p90: null, p99: null, max: null }
      const sorted = Array.from(values.subarray(0, count)).sort((a, b) => a - b)
      const at = (q: number) => Math.round(sorted[Math.min(count - 1, Math.floor(q * count))]! * 10) / 10
      return { count, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) }
    },
  }
}

/**
 * The knowledge service with each search timed into `window` (everything else unchanged).
 * @example
 * const knowledge = timedSearch(hub.knowledge, latency)
 */
export function timedSearch(knowledge: KnowledgeService, window: LatencyWindow): KnowledgeService {
  return {
    ...knowledge,
    async search(raw, principal) {
      const started = performance.now()
      try {
        return await knowledge.search(raw, principal)
      } finally {
        window.record(performance.now() - started)
      }
    },
  }
}
