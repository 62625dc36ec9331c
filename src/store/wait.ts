/**
 * Waiting on a PostgreSQL server's other transactions: a text-index rebuild waits for the
 * transactions in flight when it began, the cleanup after an erasure for older snapshots.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Asks `probe` again, with pauses doubling from 2 ms up to 100 ms, until `done` holds of its
 * answer or `limitMs` passed: the last answer, whether `done` held, and the time waited.
 * @example
 * const waited = await pollUntil(() => olderSessions(db, mark), (n) => n === 0, 30_000)
 */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, limitMs: number): Promise<{ value: T; done: boolean; ms: number }> {
  const started = performance.now()
  for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
    const value = await probe()
    const ms = Math.round(performance.now() - started)
    if (done(value)) return { value, done: true, ms }
    if (ms >= limitMs) return { value, done: false, ms }
    await sleep(Math.min(pause, limitMs - ms))
  }
}
