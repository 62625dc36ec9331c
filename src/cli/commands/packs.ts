/**
 * `knowhub packs list | show | activate | resolve | validate | doctor`:
 * the knowledge-pack client on the command line. Thin: parses options, calls
 * `src/packs`, prints human text or `--json`.
 */
import { resolve } from 'node:path'
import { Command, InvalidArgumentError } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import { noopLogger, type Logger } from '../../core/logger.js'
import {
  CATALOG_INSTRUCTIONS,
  GroundingPolicy,
  ResolveIntent,
  UsageLog,
  activatePack,
  catalogItems,
  discoverPacks,
  findPack,
  formatDiagnostic,
  listPackResources,
  renderCatalog,
  resolveContext,
  selectPacks,
  validatePath,
  type DiscoverOptions,
  type DiscoveryResult,
  type LoadedPack,
  type PackDiagnostic,
} from '../../packs/index.js'
import type { KnowHubConfig, PacksConfig } from '../../core/config.js'
import { createEmbedder } from '../../embed/factory.js'
import { loadConfig, processEnv } from '../config.js'
import { oneLine, printError, printJson, printJsonError, processIo, type Io } from '../output.js'
import { packDiscoveryOptions, packUsageLog, type PackFlags } from '../pack-options.js'

interface PacksOptions extends PackFlags {
  json?: boolean
  /** The global `--config <file>`. */
  config?: string
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer')
  return n
}

function oneOf<T extends string>(values: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${values.join(', ')}`)
    return value as T
  }
}

function discoverOptions(options: PacksOptions, config: PacksConfig): DiscoverOptions {
  return packDiscoveryOptions({ ...options, includeArchived: options.includeArchived === true }, config)
}

/**
 * The catalog instruction language: `--lang en|zh`, or with `auto` Chinese when
 * at least half of the packs declare a Chinese `language` (`zh`, `zh-CN`, …).
 * @example
 * catalogLanguage(items, 'auto') // 'zh' for a catalog of Chinese packs
 */
function catalogLanguage(items: readonly { language?: string }[], lang: string | undefined): 'en' | 'zh' {
  if (lang === 'en' || lang === 'zh') return lang
  const chinese = items.filter((item) => item.language !== undefined && /^zh(?:-|$)/iu.test(item.language)).length
  return items.length > 0 && chinese * 2 >= items.length ? 'zh' : 'en'
}

function severityMark(d: Pick<PackDiagnostic, 'severity'>): string {
  return d.severity === 'error' ? 'E' : d.severity === 'warning' ? 'W' : 'i'
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? []
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  )
}

/**
 * The `packs` command with its subcommands. Errors are printed with their
 * code and set `process.exitCode = 1`; `validate` sets it when any pack has
 * an error.
 * @example
 * program.addCommand(packsCommand({ logger }))
 * // knowhub packs resolve "What is the enterprise price?" --pack acme-product-brief --budget 4000
 */
export function packsCommand(options: { logger?: Logger; io?: Io; env?: Record<string, string | undefined> } = {}): Command {
  const io = options.io ?? processIo
  const logger = options.logger ?? noopLogger
  const env = options.env ?? processEnv()

  type Action = (opts: PacksOptions & Record<string, unknown>, args: string[], config: PacksConfig, full: KnowHubConfig) => Promise<void>
  const run =
    (action: Action) =>
    async (...params: unknown[]): Promise<void> => {
      const command = params[params.length - 1] as Command
      const args = params.slice(0, -2).filter((p): p is string => typeof p === 'string')
      const opts = command.optsWithGlobals() as PacksOptions & Record<string, unknown>
      try {
        // The `packs` section of the config file (and KNOWHUB_PACK_PATHS); flags win.
        const full = loadConfig(env, opts.config ? { configFile: opts.config } : {})
        await action(opts, args, full.packs, full)
      } catch (error) {
        if (opts.json === true) printJsonError(io, error)
        else printError(io, error)
        process.exitCode = 1
      }
    }

  const discover = (opts: PacksOptions, config: PacksConfig): Promise<DiscoveryResult> => discoverPacks(discoverOptions(opts, config), logger)
  const need = (found: DiscoveryResult, name: string): LoadedPack => {
    const pack = findPack(found, name, { includeArchived: true })
    if (!pack) {
      const rejected = found.rejected.find((r) => r.name === name)
      const why = rejected ? ` (it did not load: ${rejected.issues.map((i) => i.message).join(' ')})` : ''
      throw new KnowHubError('not_found', `No knowledge pack named "${name}"${why}`, { pack: name })
    }
    return pack
  }

  const packs = new Command('packs')
    .description('Knowledge packs (KNOWLEDGE.md): discover, validate, catalog, activate, resolve context')
    .option('--project <dir>', 'project folder (default: current folder)')
    .option('--home <dir>', 'home folder for the user scope (default: your home)')
    .option('--no-user', 'do not scan the user scope')
    .option('--client <name>', 'client name for .<client>/knowledge folders (default: packs.clientName, else knowhub)')
    .option('--path <dir>', 'extra pack folder (repeatable)', collect)
    .option('--builtin <dir>', 'built-in pack folder (lowest precedence)')
    .option('--include-archived', 'show archived packs')
    .option('--allow-type <type>', 'accept a non-standard pack type (repeatable; * for all)', collect)
    .option('--max-depth <n>', 'deepest folder level scanned per location', positiveInt)
    .option('--max-dirs <n>', 'most folders scanned per location', positiveInt)
    .option('--gitignore', 'skip folders ignored by .gitignore')
    .option('--no-gitignore', 'do not read .gitignore files (when the config turns it on)')
    .option('--json', 'print JSON (errors too: {"error":{"code","message","details"}} on stdout)')
    .addHelpText(
      'after',
      '\nThe `packs` section of the config file (--config, KNOWHUB_CONFIG or ./knowhub.config.json) and KNOWHUB_PACK_PATHS add folders, types, limits and usage logs; flags win.',
    )

  packs
    .command('list')
    .description('List the available packs (the catalog)')
    .option('--xml', 'print the <available_knowledge_packs> catalog and its instruction')
    .option(
      '--lang <lang>',
      'language of the --xml instruction: en | zh | auto (Chinese when at least half of the packs are)',
      oneOf(['en', 'zh', 'auto'] as const),
      'auto',
    )
    .action(
      run(async (opts, _args, config) => {
        const found = await discover(opts, config)
        const items = catalogItems(found)
        if (opts.xml) {
          const xml = renderCatalog(items)
          if (xml === undefined) io.err('No knowledge packs available: no catalog.')
          else io.out(`${CATALOG_INSTRUCTIONS[catalogLanguage(items, opts.lang as string | undefined)]}\n\n${xml}`)
          return
        }
        if (opts.json)
          return printJson(io, { packs: items, archived: found.archived.map((p) => p.item.name), rejected: found.rejected.length, shadowed: found.shadowed })
        if (items.length === 0) {
          io.out('No knowledge packs found. Run `knowhub packs doctor` to see where they were looked for.')
          return
        }
        io.out(
          table([
            ['NAME', 'SCOPE', 'STATUS', 'PROFILE', 'MODE', 'TYPE', 'DESCRIPTION'],
            ...items.map((i) => [i.name, i.scope, i.status, i.profile ?? 'wiki-first', i.runtime?.mode ?? 'data', i.type, oneLine(i.description, 60)]),
          ]).join('\n'),
        )
        const notes = [
          found.archived.length > 0 ? `${found.archived.length} archived (--include-archived)` : '',
          found.rejected.length > 0 ? `${found.rejected.length} not loaded` : '',
          found.shadowed.length > 0 ? `${found.shadowed.length} shadowed` : '',
        ].filter(Boolean)
        if (notes.length > 0) io.err(`${notes.join(', ')}: see \`knowhub packs doctor\``)
      }),
    )

  packs
    .command('show')
    .description('Show one pack: metadata, diagnostics and resources')
    .argument('<name>', 'pack name')
    .action(
      run(async (opts, [name = ''], config) => {
        const found = await discover(opts, config)
        const pack = need(found, name)
        const listing = await listPackResources(pack)
        const shadows = found.shadowed.filter((s) => s.name === name)
        if (opts.json) return printJson(io, { pack: pack.item, issues: [...pack.issues, ...listing.issues], resources: listing.resources, shadowed: shadows })
        const item = pack.item
        io.out(`${item.name} (${item.scope})`)
        io.out(`  ${item.description}`)
        io.out(
          `  type ${item.type}, status ${item.status}, trust ${item.trust ?? 'unreviewed'}, profile ${item.profile ?? 'wiki-first'}, mode ${item.runtime?.mode ?? 'data'}${item.version ? `, version ${item.version}` : ''}${item.language ? `, language ${item.language}` : ''}`,
        )
        if (item.metadata?.primaryDocument) io.out(`  primary document: ${item.metadata.primaryDocument}`)
        if (item.metadata?.producedBy) io.out(`  produced by: ${JSON.stringify(item.metadata.producedBy)}`)
        io.out(`  location: ${item.location}`)
        for (const s of shadows) io.out(`  shadows: ${s.shadowed.location} (${s.shadowed.scope})`)
        const issues = [...pack.issues, ...listing.issues]
        if (issues.length > 0) {
          io.out('diagnostics:')
          for (const d of issues) io.out(`  ${severityMark(d)} ${formatDiagnostic(d)}`)
        }
        io.out(`resources (${listing.resources.length}):`)
        for (const r of listing.resources) io.out(`  ${r.kind.padEnd(8)} ${r.path}`)
      }),
    )

  packs
    .command('activate')
    .description('Activate a pack: print its wrapped guide (tool mode) or its location (file mode)')
    .argument('<name>', 'pack name')
    .option('--mode <mode>', 'tool | file', oneOf(['tool', 'file'] as const), 'tool')
    .option('--confirm', 'confirm use of a disputed pack')
    .action(
      run(async (opts, [name = ''], config) => {
        const found = await discover(opts, config)
        const activation = await activatePack(need(found, name), { mode: opts.mode as 'tool' | 'file', confirm: opts.confirm === true })
        if (opts.json) return printJson(io, activation)
        io.out(activation.content)
        for (const w of activation.warnings) io.err(`${severityMark(w)} ${formatDiagnostic(w)}`)
      }),
    )

  packs
    .command('resolve')
    .description('Resolve the runtime context for a task within a token budget')
    .argument('<task>', 'the task text')
    .option('--pack <name>', 'pack to use (repeatable; default: packs whose description matches the task)', collect)
    .option('--budget <tokens>', 'token budget', positiveInt, 8000)
    .option('--grounding <policy>', 'required | recommended | off', oneOf(GroundingPolicy.options))
    .option('--intent <intent>', `task intent (${ResolveIntent.options.join(' | ')}); detected when absent`, oneOf(ResolveIntent.options))
    .option('--confirm', 'confirm use of disputed packs')
    .option('--log-dir <dir>', 'append usage records to <dir>/knowledge-usage.jsonl (default: packs.logDir)')
    .option('--log-pack-runs', "also append usage records to each pack's runs/usage.jsonl (default: packs.useRunsDir)")
    .option('--no-log-pack-runs', "do not write into the packs' runs/ (when the config turns it on)")
    .option('--embed', 'blend in similarity from the configured embedder (no database is opened; slow: section vectors are not kept between calls)')
    .action(
      run(async (opts, [task = ''], config, full) => {
        const found = await discover(opts, config)
        const names = (opts.pack as string[] | undefined) ?? []
        const selected = names.length > 0 ? names.map((n) => need(found, n)) : selectPacks(task, found.packs)
        const embedder = opts.embed === true ? await createEmbedder(full.embedder, { logger }) : undefined
        let result
        try {
          result = await resolveContext({
            task,
            packs: selected,
            budget: opts.budget as number,
            ...(opts.grounding ? { grounding: opts.grounding as GroundingPolicy } : {}),
            ...(opts.intent ? { intent: opts.intent as ResolveIntent } : {}),
            confirmed: opts.confirm === true,
            ...(embedder ? { embedder } : {}),
            logger,
          })
        } finally {
          await embedder?.close?.()
        }
        const usage = packUsageLog(
          { ...(opts.logDir ? { logDir: opts.logDir as string } : {}), ...(typeof opts.logPackRuns === 'boolean' ? { logPackRuns: opts.logPackRuns } : {}) },
          config,
        )
        if (usage.dir || usage.packRuns) {
          const log = await UsageLog.create({ ...(usage.dir ? { dir: usage.dir } : {}), packRuns: usage.packRuns, logger })
          await log.record(result, selected)
        }
        if (opts.json) return printJson(io, result)
        if (result.context) io.out(result.context)
        else io.err('No context selected.')
        io.err(`tokens ${result.tokens}/${result.budget}, intent ${result.intent}, packs ${result.wrapper_order.join(', ') || '(none)'}`)
        for (const p of result.packs) {
          io.err(`${p.pack}: ${p.selected_files.length} files${p.source_anchors.length ? `, ${p.source_anchors.length} source anchors` : ''}`)
          for (const w of p.compile_warnings) io.err(`  ${severityMark(w)} ${w.path}: ${w.message}`)
        }
        for (const e of result.excluded) io.err(`excluded ${e.pack}: ${e.message}${e.code === 'confirmation_required' ? ' (use --confirm)' : ''}`)
        if (result.omitted_count > 0) {
          const reasons = Object.entries(result.omitted_reasons)
            .map(([reason, n]) => `${n} ${reason}`)
            .join(', ')
          io.err(`${result.omitted_count} candidate sections left out (${reasons}; see --json omitted)`)
        }
        if (result.missing.length > 0) io.err(`missing: ${result.missing.join('; ')} → ${result.recommendation ?? ''}`)
      }),
    )

  packs
    .command('validate')
    .description('Validate a pack folder or a folder of packs; exits 1 on errors (for CI)')
    .argument('<path>', 'pack folder, KNOWLEDGE.md, or folder of packs')
    .action(
      run(async (opts, [path = ''], config) => {
        // The types discovery would accept: --allow-type and packs.allowedTypes.
        const { allowedTypes } = discoverOptions(opts, config)
        const reports = await validatePath(path, { ...(allowedTypes ? { allowedTypes } : {}), logger })
        const errors = reports.reduce((n, r) => n + r.errors, 0)
        const warnings = reports.reduce((n, r) => n + r.warnings, 0)
        if (errors > 0 || reports.length === 0) process.exitCode = 1
        if (opts.json) return printJson(io, { ok: errors === 0 && reports.length > 0, errors, warnings, packs: reports })
        if (reports.length === 0) {
          io.out(`No KNOWLEDGE.md found under ${resolve(path)}.`)
          return
        }
        for (const report of reports) {
          const verdict = report.errors > 0 ? 'FAIL' : 'ok'
          io.out(`${verdict.padEnd(4)} ${report.name ?? '(unnamed)'} ${report.path} [${report.outcome}] ${report.errors} errors, ${report.warnings} warnings`)
          for (const d of report.issues) io.out(`     ${severityMark(d)} ${formatDiagnostic(d)}`)
        }
        io.out(`${reports.length} packs, ${errors} errors, ${warnings} warnings`)
      }),
    )

  packs
    .command('doctor')
    .description('Show every scanned location, shadowed, rejected and archived packs, and scan problems')
    .action(
      run(async (opts, _args, config) => {
        const found = await discover(opts, config)
        const summary = {
          locations: found.locations,
          packs: found.packs.map((p) => ({ name: p.item.name, scope: p.item.scope, location: p.item.location, issues: p.issues })),
          archived: found.archived.map((p) => ({ name: p.item.name, location: p.item.location })),
          rejected: found.rejected,
          shadowed: found.shadowed,
          diagnostics: found.diagnostics,
        }
        if (opts.json) return printJson(io, summary)
        io.out('locations:')
        for (const l of found.locations) {
          const state = l.exists
            ? `${l.packsFound} packs, ${l.dirsScanned} folders read, ${l.skippedDirs} skipped${l.limited ? `, stopped by ${l.limited} limit` : ''}`
            : 'missing'
          io.out(`  ${l.scope.padEnd(8)} ${l.path} (${state})`)
        }
        io.out(
          `packs: ${found.packs.length} available, ${found.archived.length} archived, ${found.rejected.length} not loaded, ${found.shadowed.length} shadowed`,
        )
        for (const p of found.packs) {
          const notable = p.issues.filter((i) => i.severity !== 'info')
          if (notable.length === 0) continue
          io.out(`  ${p.item.name}:`)
          for (const d of notable) io.out(`    ${severityMark(d)} ${formatDiagnostic(d)}`)
        }
        for (const a of found.archived) io.out(`  archived ${a.item.name} ${a.item.location}`)
        for (const r of found.rejected) {
          io.out(`  ${r.outcome} ${r.location}`)
          for (const d of r.issues) io.out(`    ${severityMark(d)} ${formatDiagnostic(d)}`)
        }
        for (const s of found.shadowed) io.out(`  shadowed ${s.name}: ${s.shadowed.location} (${s.shadowed.scope}) by ${s.kept.location} (${s.kept.scope})`)
        const scan = found.diagnostics.filter((d) => d.code !== 'shadowed' && d.code !== 'archived')
        if (scan.length > 0) {
          io.out('scan:')
          for (const d of scan) io.out(`  ${severityMark(d)} ${formatDiagnostic(d)}`)
        }
      }),
    )

  return packs
}
