/**
 * Where a one-shot command's time goes (`KNOWHUB_TIMING=1`, issue 42): the process's start (Node
 * and the CLI's modules, until `main` runs), reading the configuration, opening the hub (the
 * embedded database and the services), the embedder's model becoming ready (it loads beside the
 * database), the command itself (for a search, its stages: embed, full-text, vector, rank) and
 * closing. Printed as one JSON line on stderr when the command ends; `bench/startup.ts` reads it.
 * Wall times are milliseconds since the process started (`performance.now()`), CPU the process's
 * own (every thread), so the breakdown holds on a loaded machine too.
 */
import type { SearchObserver, SearchStage } from '../core/observe.js'
import type { Io } from './output.js'

/** One mark: when (ms since the process started) and the process's CPU by then (ms). */
interface Mark {
  at: number
  cpu: number
}

const cpuMs = (): number => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}

const now = (): Mark => ({ at: performance.now(), cpu: cpuMs() })
const round = (ms: number): number => Math.round(ms * 10) / 10

/** The marks of one command run (nothing is recorded unless enabled). */
export interface CommandTiming {
  readonly enabled: boolean
  /** Records `name` now (the first time only). */
  mark(name: string): void
  /** An observer of the search's stages (undefined when disabled). */
  readonly search: SearchObserver | undefined
  /** Prints the breakdown as one JSON line on stderr. */
  report(io: Io): void
}

/**
 * The timing of this process's command; `enabled` from KNOWHUB_TIMING (src/cli/env.ts).
 * @example
 * const timing = commandTiming(cliEnv().timing)
 * timing.mark('open')
 */
export function commandTiming(enabled: boolean): CommandTiming {
  const marks = new Map<string, Mark>()
  const stages: Partial<Record<SearchStage, number>> = {}
  const mark = (name: string): void => {
    if (enabled && !marks.has(name)) marks.set(name, now())
  }
  const between = (from: string, to: string) => {
    const a = marks.get(from)
    const b = marks.get(to)
    return a && b ? { wall_ms: round(b.at - a.at), cpu_ms: round(b.cpu - a.cpu) } : undefined
  }
  return {
    enabled,
    mark,
    search: enabled ? { stage: (stage, seconds) => void (stages[stage] = round((stages[stage] ?? 0) + seconds * 1000)), cache: () => undefined } : undefined,
    report(io) {
      if (!enabled) return
      const end = now()
      const main = marks.get('main')
      const phases = {
        start: main ? { wall_ms: round(main.at), cpu_ms: round(main.cpu) } : undefined,
        config: between('main', 'open'),
        open: between('open', 'opened'),
        model: between('open', 'model'),
        command: between('opened', 'done'),
        close: between('done', 'closed'),
      }
      io.err(JSON.stringify({ knowhub_timing: { ...phases, search_stages_ms: stages, total: { wall_ms: round(end.at), cpu_ms: round(end.cpu) } } }))
    },
  }
}

let current: CommandTiming = commandTiming(false)

/**
 * Starts the timing of a command run (`main` does, once per command): later marks go to it.
 * @example
 * beginTiming(cliEnv().timing).mark('main')
 */
export function beginTiming(enabled: boolean): CommandTiming {
  current = commandTiming(enabled)
  return current
}

/** The timing of the command running now (a disabled one outside `main`). */
export function currentTiming(): CommandTiming {
  return current
}
