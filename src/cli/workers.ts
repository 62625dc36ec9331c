/**
 * `knowhub start --workers N`: N server processes sharing one port (node:cluster; the primary
 * hands connections out round-robin), each with its own services, pool and caches, on one
 * PostgreSQL database (docs/scale.md). The primary serves nothing itself: it forks the
 * workers, restarts one that dies (logged, with a growing delay while restarts keep failing),
 * and on SIGINT/SIGTERM passes the signal on and waits for every worker's graceful stop.
 */
import cluster, { type Worker } from 'node:cluster'
import type { Logger } from '../core/logger.js'

export interface SuperviseOptions {
  workers: number
  logger: Logger
  /** Resolves with the signal that stops the workers. */
  stop: Promise<NodeJS.Signals>
  /** First delay before restarting a worker that died (default 500 ms); doubled up to 30 s while none reaches listening. */
  restartDelayMs?: number
  /** Environment variables of the workers on top of the supervisor's (`workerEnv` of env.ts). */
  env?: Record<string, string>
  /** How long the workers get to stop before they are killed (default 30 s). */
  shutdownTimeoutMs?: number
}

/**
 * Runs the workers until `stop` resolves; rejects when a worker fails before any worker ever
 * listened (a start-up error such as a port in use or a bad config: restarting cannot help).
 * Call it in the primary only (`cluster.isPrimary`); each worker runs the ordinary server.
 * @example
 * await superviseWorkers({ workers: 2, logger, stop: untilSignal() })
 */
export async function superviseWorkers(options: SuperviseOptions): Promise<void> {
  const { logger } = options
  const firstDelay = options.restartDelayMs ?? 500
  let stopping = false
  let everListened = false
  let delay = firstDelay
  const live = new Set<Worker>()

  let fail: (error: Error) => void = () => {}
  const failed = new Promise<never>((_, reject) => (fail = reject))

  const fork = (): void => {
    const worker = cluster.fork(options.env)
    live.add(worker)
    worker.once('listening', (address) => {
      everListened = true
      delay = firstDelay
      logger.info('server.worker_started', { worker: worker.process.pid, port: address.port })
    })
    worker.once('exit', (code, signal) => {
      live.delete(worker)
      if (stopping) return
      if (!everListened) {
        fail(new Error(`A server worker (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}) before listening: see its error above`))
        return
      }
      logger.error('server.worker_exited', { worker: worker.process.pid, code, signal, restartInMs: delay })
      setTimeout(() => stopping || fork(), delay).unref()
      delay = Math.min(delay * 2, 30_000)
    })
  }

  // The workers start with the memory settings of `npm start` unless told otherwise (docs/scale.md, Memory).
  if (!process.execArgv.some((flag) => flag.startsWith('--max-semi-space-size'))) {
    cluster.setupPrimary({ execArgv: [...process.execArgv, '--max-semi-space-size=2'] })
  }
  for (let i = 0; i < options.workers; i++) fork()
  let signal: NodeJS.Signals = 'SIGTERM'
  try {
    signal = await Promise.race([options.stop, failed])
    logger.info('server.stopping', { signal, workers: live.size })
  } finally {
    stopping = true
    await stopAll(live, signal, options.shutdownTimeoutMs ?? 30_000)
  }
}

/** Sends `signal` to every worker and waits for them to exit (SIGKILL after `timeoutMs`). */
async function stopAll(live: Set<Worker>, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  const exits = [...live].map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))))
  for (const worker of live) worker.process.kill(signal)
  const timer = setTimeout(() => {
    for (const worker of live) if (!worker.isDead()) worker.process.kill('SIGKILL')
  }, timeoutMs)
  await Promise.all(exits)
  clearTimeout(timer)
}
