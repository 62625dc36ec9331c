/**
 * The knowledge-pack tools (seed 000 Steps 3-6) over packs discovered on the local
 * filesystem: knowledge_pack_list (the catalog), knowledge_pack_activate (the wrapped
 * guide and its resource list; the catalog goes into its description) and
 * knowledge_pack_resolve (runtime context for a task, within a token budget, wrapped
 * as data). No packs → no pack tools at all.
 */
import { z } from 'zod'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { neutralise } from '../core/wrap.js'
import type { Embedder } from '../embed/embedder.js'
import { GUIDE_MAX_RESOURCES } from '../packs/activate/activate.js'
import { CATALOG_INSTRUCTIONS, renderCatalog } from '../packs/catalog/catalog.js'
import { PackIndexCache } from '../packs/pack-index/pack-index.js'
import { DEFAULT_BUDGET, ResolveIntent, type ResolveResult } from '../packs/resolve/index.js'
import { GroundingPolicy, type KnowledgeCatalogItem, type LoadedPack, type PackDiagnostic } from '../packs/schema.js'
import { createPackService, type PackService } from '../packs/service.js'
import { defineTool, type AgentTool, type ToolContext } from './define.js'

/**
 * Names of the pack tools.
 * @example
 * kit.tools.filter((t) => (PACK_TOOL_NAMES as readonly string[]).includes(t.name))
 */
export const PACK_TOOL_NAMES = ['knowledge_pack_list', 'knowledge_pack_activate', 'knowledge_pack_resolve'] as const

/**
 * Bounds and re-check interval of the pack index cache of the tools: 8 packs,
 * 128 MiB of indexed text (about 5× that in memory), files re-checked (one
 * listing, no read) at most once a second, a changed pack re-indexed.
 * @example
 * new PackIndexCache(TOOL_INDEX_CACHE)
 */
export const TOOL_INDEX_CACHE = { maxEntries: 8, maxBytes: 128 * 2 ** 20, revalidateMs: 1000 } as const

/**
 * A pack index cache for the pack tools of a long-lived process (MCP server,
 * `knowhub start`): repeated resolves reuse each pack's index instead of
 * re-reading the pack; a pack whose files changed is re-indexed.
 * @example
 * const packIndexCache = toolPackIndexCache(logger)
 * app.all('/mcp', (c) => handleMcpRequest(c.req.raw, { backend, packs, packIndexCache }))
 */
export function toolPackIndexCache(logger?: Logger): PackIndexCache {
  return new PackIndexCache({ ...TOOL_INDEX_CACHE, ...(logger ? { logger } : {}) })
}

/**
 * The packs service of a toolkit given packs: the packs as a fixed set, the
 * embedder, and `packIndexCache` or a {@link toolPackIndexCache}. `undefined` without packs.
 * @example
 * const packService = toolPackService({ packs: found.packs, embedder, logger })
 */
export function toolPackService(options: {
  packs?: readonly LoadedPack[] | undefined
  embedder?: Embedder | undefined
  packIndexCache?: PackIndexCache | undefined
  logger?: Logger | undefined
}): PackService | undefined {
  const packs = options.packs ?? []
  if (packs.length === 0) return undefined
  return createPackService({
    packs,
    indexCache: options.packIndexCache ?? toolPackIndexCache(options.logger),
    ...(options.embedder ? { embedder: options.embedder } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  })
}

/** The catalog instruction (English) and `<available_knowledge_packs>`, or `undefined` without items. */
function catalogText(items: readonly KnowledgeCatalogItem[]): string | undefined {
  const catalog = renderCatalog(items)
  return catalog === undefined ? undefined : `${CATALOG_INSTRUCTIONS.en}\n${catalog}`
}

/**
 * The catalog disclosure of seed 000 Step 3: the behaviour instruction and
 * `<available_knowledge_packs>`; `undefined` when there is no pack (never an empty catalog).
 * @example
 * const disclosure = packCatalog(found.packs)
 * if (disclosure) systemPrompt += disclosure
 */
export function packCatalog(packs: readonly LoadedPack[]): string | undefined {
  return catalogText(packs.map((p) => p.item))
}

function packServiceOf(context: ToolContext): PackService {
  if (!context.packService) throw new KnowHubError('internal_error', 'The pack tools run without a packs service')
  return context.packService
}

const OMITTED_WORDS: Record<string, string> = {
  budget: 'over the token budget',
  count_limit: 'not tried: token-count limit',
  miss_limit: 'not tried: too many misses in a row',
}

/** `12 over the token budget, 3 not tried: …` */
function omittedSummary(reasons: Readonly<Record<string, number | undefined>>): string {
  return Object.entries(reasons)
    .map(([reason, n]) => `${n ?? 0} ${OMITTED_WORDS[reason] ?? reason}`)
    .join(', ')
}

function warningLines(warnings: readonly Pick<PackDiagnostic, 'severity' | 'message'>[]): string[] {
  return warnings.length === 0 ? [] : ['', 'Warnings:', ...warnings.map((w) => `- ${w.severity}: ${neutralise(w.message)}`)]
}

/**
 * The pack tools for these packs: `[]` when there are none (do not register a tool
 * that can activate nothing). Pack names become an enum in the schemas.
 * @example
 * const tools = packTools(found.packs)
 */
export function packTools(packs: readonly LoadedPack[]): AgentTool[] {
  const catalog = packCatalog(packs)
  const [first, ...rest] = packs.map((p) => p.item.name)
  if (catalog === undefined || first === undefined) return []
  const PackName = z.enum([first, ...rest])

  const list = defineTool({
    name: 'knowledge_pack_list',
    description: 'List the available knowledge packs (name, description, type, status, trust, profile, runtime mode, location).',
    input: z.strictObject({}),
    async handler(_args, context) {
      const { items } = await packServiceOf(context).catalog()
      return { text: catalogText(items) ?? 'No knowledge packs are available.', data: { packs: items, count: items.length } }
    },
  })

  const activate = defineTool({
    name: 'knowledge_pack_activate',
    description:
      'Activate a knowledge pack by name: returns its guide (KNOWLEDGE.md) and resource list, wrapped as data. ' +
      'Disputed packs need confirm: true after the user agreed to use them.\n\n' +
      catalog,
    input: z.strictObject({
      name: PackName.describe('The pack name from <available_knowledge_packs>.'),
      confirm: z.boolean().default(false).describe('Explicit confirmation, required for disputed packs.'),
    }),
    async handler(args, context) {
      const activation = await packServiceOf(context).activate(args.name, { mode: 'tool', confirm: args.confirm })
      context.activated.add(activation.name)
      return {
        text: [activation.content, ...warningLines(activation.warnings)].join('\n'),
        data: {
          name: activation.name,
          location: activation.location,
          pack_root: activation.packRoot,
          content_hash: activation.contentHash,
          resources: activation.resources.slice(0, GUIDE_MAX_RESOURCES).map((r) => ({ path: r.path, kind: r.kind, size: r.size })),
          resources_total: activation.resources.length,
          warnings: activation.warnings,
        },
      }
    },
  })

  const resolve = defineTool({
    name: 'knowledge_pack_resolve',
    description:
      'Select the parts of knowledge packs a task needs (compiled views, document sections, wiki pages) within a token budget, wrapped as data, ' +
      'with the audit record (selected files, source anchors, missing facts). Default packs: those activated so far, else the packs whose catalog entry matches the task.',
    input: z.strictObject({
      task: z.string().trim().min(1).max(10_000).describe('The task the context is for.'),
      packs: z.array(PackName).min(1).max(20).optional().describe('Packs to use (default: activated ones, else matched by the task).'),
      budget: z.number().int().min(100).max(200_000).default(DEFAULT_BUDGET).describe('Token budget of the whole wrapped context.'),
      intent: ResolveIntent.optional().describe('answer, detail, cite, verify, ingest or dispute (detected from the task when absent).'),
      grounding: GroundingPolicy.optional().describe("Citation policy: required, recommended or off (default: from each pack's grounding)."),
      confirm: z.boolean().default(false).describe('Use disputed packs (only after the user agreed).'),
    }),
    async handler(args, context) {
      const { selected, result } = await packServiceOf(context).resolve({
        task: args.task,
        packs: args.packs ?? (context.activated.size > 0 ? [...context.activated] : undefined),
        budget: args.budget,
        ...(args.intent ? { intent: args.intent } : {}),
        ...(args.grounding ? { grounding: args.grounding } : {}),
        confirmed: args.confirm,
      })
      if (selected.length === 0) {
        return {
          text: 'No knowledge pack matches this task. Name packs explicitly (packs) or activate one first.',
          data: { task: args.task, packs: [], context: '', tokens: 0, budget: args.budget, missing: [], excluded: [] },
        }
      }
      return resolveAnswer(result)
    },
  })

  return [list, activate, resolve]
}

/** The resolve tool's answer: the wrapped context with notes for the model, and the audit without the pieces. */
function resolveAnswer(result: ResolveResult): { text: string; data: Record<string, unknown> } {
  const notes = [
    `(${result.tokens} of ${result.budget} tokens; intent ${result.intent}; packs ${result.packs.map((p) => p.pack).join(', ') || 'none'})`,
    ...(result.missing.length > 0 ? [`Missing facts: ${neutralise(result.missing.join('; '))}. Ask the user or mark them unknown.`] : []),
    ...result.excluded.map((e) => `Excluded ${e.pack}: ${e.message}`),
    ...(result.omitted_count > 0 ? [`${result.omitted_count} candidate sections were left out (${omittedSummary(result.omitted_reasons)}).`] : []),
  ]
  return {
    text: [result.context || '(No section of the selected packs matches the task.)', '', ...notes].join('\n'),
    data: {
      task: result.task,
      intent: result.intent,
      budget: result.budget,
      tokens: result.tokens,
      context: result.context,
      wrapper_order: result.wrapper_order,
      packs: result.packs.map(({ pieces: _pieces, ...audit }) => audit),
      excluded: result.excluded,
      omitted: result.omitted,
      omitted_count: result.omitted_count,
      omitted_reasons: result.omitted_reasons,
      missing: result.missing,
      ...(result.recommendation ? { recommendation: result.recommendation } : {}),
    },
  }
}
