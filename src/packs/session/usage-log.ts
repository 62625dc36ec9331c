/**
 * Usage records (seed 000 Step 8) as JSON Lines, to a configured log folder
 * (`knowledge-usage.jsonl`) and, only when configured, to a pack's own
 * `runs/usage.jsonl`; beside them one context-resolution record per resolve
 * (`context-resolutions.jsonl`, and `runs/context-<run_id>.json` in each pack
 * when configured). Never writes into a pack otherwise.
 */
import { appendFile, mkdir, realpath } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { z } from 'zod'
import { systemClock, type Clock } from '../../core/clock.js'
import { KnowHubError } from '../../core/errors.js'
import { noopLogger, type Logger } from '../../core/logger.js'
import { isInside, resolvePackPath } from '../files/paths.js'
import { CONTEXT_LOG_FILE, contextRecord, writePackRunRecord, type RecordedResult } from './context-record.js'
import type { PackResolution } from '../resolve/index.js'
import type { ContextResolutionRecord, PackActivationMode } from '../evidence/run-records.js'
import { GroundingPolicy, PackProfile, PackStatus, RuntimeMode, type LoadedPack } from '../schema.js'

/** The real path of `path`, resolving symlinks of the part that exists. */
async function realpathLoose(path: string): Promise<string> {
  const rest: string[] = []
  let current = path
  for (;;) {
    try {
      return join(await realpath(current), ...rest.reverse())
    } catch {
      const parent = dirname(current)
      if (parent === current) return path
      rest.push(basename(current))
      current = parent
    }
  }
}

/**
 * One usage record, keys as in seed 000 Step 8.
 * @example
 * const record = UsageRecord.parse(JSON.parse(line))
 */
export const UsageRecord = z.object({
  pack: z.string(),
  version: z.string().optional(),
  status: PackStatus,
  profile: PackProfile,
  runtime_mode: RuntimeMode,
  selected_files: z.array(z.string()),
  grounding: GroundingPolicy,
  citation_gaps: z.array(z.string()),
  warnings: z.array(z.string()),
  timestamp: z.string(),
})
export type UsageRecord = z.infer<typeof UsageRecord>

/**
 * File name of the log in the log folder.
 * @example
 * const lines = (await readFile(join(logDir, USAGE_LOG_FILE), 'utf8')).trim().split('\n')
 */
export const USAGE_LOG_FILE = 'knowledge-usage.jsonl'

/**
 * The usage record of one pack resolution.
 * @example
 * const record = usageRecord(result.packs[0], new Date())
 */
export function usageRecord(resolution: PackResolution, at: Date): UsageRecord {
  return {
    pack: resolution.pack,
    ...(resolution.version ? { version: resolution.version } : {}),
    status: resolution.status,
    profile: resolution.profile,
    runtime_mode: resolution.runtime_mode,
    selected_files: resolution.selected_files,
    grounding: resolution.grounding,
    citation_gaps: resolution.citation_gaps,
    warnings: resolution.compile_warnings.filter((w) => w.severity !== 'info').map((w) => `${w.severity} ${w.path}: ${w.message}`),
    timestamp: at.toISOString().replace(/\.\d{3}Z$/u, 'Z'),
  }
}

/** Where usage records go. */
export interface UsageLogOptions {
  /** Log folder; created when missing. Must not be inside a pack. */
  dir?: string
  /** Also append to each pack's `runs/usage.jsonl` (opt-in: this writes into packs). */
  packRuns?: boolean
  clock?: Clock
  logger?: Logger
}

/**
 * Appends usage records. Create with {@link UsageLog.create}.
 * @example
 * const log = await UsageLog.create({ dir: '.knowhub/logs' })
 * await log.record(result, packs)
 */
export class UsageLog {
  private constructor(
    private readonly dir: string | undefined,
    private readonly packRuns: boolean,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Resolves the log folder (symlinks included); it is created on the first record, after the pack check. */
  static async create(options: UsageLogOptions): Promise<UsageLog> {
    const dir = options.dir === undefined ? undefined : await realpathLoose(resolve(options.dir))
    return new UsageLog(dir, options.packRuns === true, options.clock ?? systemClock, options.logger ?? noopLogger)
  }

  /** Path of the log file in the log folder, if any. */
  get file(): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, USAGE_LOG_FILE)
  }

  /**
   * Writes one usage record per resolved pack and the context-resolution
   * record of the resolve. `packs` are the packs of the resolution (to find
   * their roots); `activation` tells how each was activated (default
   * `explicit`). Refuses (`forbidden`) a log folder that lies inside one of
   * the packs.
   */
  async record(
    result: RecordedResult,
    packs: readonly LoadedPack[],
    options: { activation?: (pack: string) => PackActivationMode } = {},
  ): Promise<UsageRecord[]> {
    const at = this.clock.now()
    const records = result.packs.map((resolution) => usageRecord(resolution, at))
    if (records.length === 0) return records
    const context = contextRecord(result, packs, { at, ...(options.activation ? { activation: options.activation } : {}) })
    if (this.dir !== undefined) {
      for (const pack of packs) {
        if (isInside(pack.realRoot, this.dir)) {
          throw new KnowHubError('forbidden', `The usage log folder ${this.dir} is inside pack "${pack.item.name}"; use packRuns to write into a pack.`, {
            dir: this.dir,
            pack: pack.item.name,
          })
        }
      }
      await mkdir(this.dir, { recursive: true })
      await appendFile(join(this.dir, USAGE_LOG_FILE), records.map((r) => JSON.stringify(r)).join('\n') + '\n', 'utf8')
      if (context) await appendFile(join(this.dir, CONTEXT_LOG_FILE), `${JSON.stringify(context)}\n`, 'utf8')
    }
    if (this.packRuns) {
      for (const record of records) {
        const pack = packs.find((p) => p.item.name === record.pack)
        if (!pack) continue
        const runs = await resolvePackPath(pack.realRoot, 'runs')
        if (!runs.ok) {
          this.logger.warn('packs.usage.runs_refused', { pack: pack.item.name, reason: runs.diagnostic.message })
          continue
        }
        await mkdir(runs.absPath, { recursive: true })
        await appendFile(join(runs.absPath, 'usage.jsonl'), JSON.stringify(record) + '\n', 'utf8')
        if (context) await this.writeRunRecord(pack, context)
      }
    }
    this.logger.debug('packs.usage.recorded', { records: records.length, context: context?.run_id })
    return records
  }

  /** `runs/<run_id>.json` in one pack; a refused `runs/` is logged, not thrown. */
  private async writeRunRecord(pack: LoadedPack, record: ContextResolutionRecord): Promise<void> {
    if (!(await writePackRunRecord(pack, record))) this.logger.warn('packs.context.runs_refused', { pack: pack.item.name })
  }
}
