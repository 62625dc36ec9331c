/**
 * `knowhub/packs`: the Agent Knowledge pack client — discover, validate,
 * catalog, activate, resolve, wrap, sessions and usage logs, and the packs
 * service the CLI, agent tools and MCP server share. Needs no database.
 * Only the entry functions, their option and result types and the schemas
 * are exported; the steps behind them are not.
 *
 * One folder per step of the standard (seed 000, seed 001), in the order a pack
 * goes through them: `discover/` (scan the scopes, precedence, discovery
 * options) → `load/` (KNOWLEDGE.md: parse, the validation table, the checks on
 * disk) → `catalog/` (tier 1: the catalog; choosing packs by name or task) →
 * `activate/` (tier 2: the guide; reading one file for a client) → `resolve/`
 * (tier 3: the runtime context within a budget, and the task's subgraph of the
 * v0.7 layers) over `pack-index/` (a pack's sections and their lexical terms,
 * built once per pack) → `evidence/` (tier 4: source maps, compile runs, the
 * record schemas) → `wrap/` (every piece as data); `session/` (long-lived
 * context, usage and context-resolution logs). Beside them: `files/` (safe
 * paths, listing, the hazard scan), `layers/` (the v0.7 ontology and answers:
 * records and loading), `access/` (who may use which pack: access rules, trust
 * gate, persisted state), `validate/` (for authors: strict validation,
 * `packs init`), and `service.ts`, what every entry point calls.
 *
 * @example
 * import { discoverPacks, discloseCatalog, PackSession } from 'knowhub/packs'
 * const found = await discoverPacks({ projectDir: process.cwd(), homeDir: os.homedir() })
 * const { catalog, instruction, tool } = discloseCatalog(found.packs.map((p) => p.item))
 * const session = await PackSession.create({ packs: found.packs })
 * await session.activate('acme-product-brief')
 * const { context } = await session.resolve('What is the enterprise price?', { budget: 8000 })
 */
// Schemas and types of the catalog record and diagnostics.
export {
  GroundingPolicy,
  KnowledgeCatalogItem,
  PackDiagnostic,
  PackGrounding,
  PackProfile,
  PackScope,
  PackStatus,
  PackTrust,
  ProducedBy,
  RuntimeMode,
  STANDARD_PACK_TYPES,
  formatDiagnostic,
} from './schema.js'
export type { LoadedPack, RejectedPack } from './schema.js'

// Discover and load.
export { DiscoverOptions, discoverPacks, findPack } from './discover/discover.js'
export type { DiscoveryResult, ShadowRecord } from './discover/discover.js'
export type { ScanLocation } from './discover/scan.js'
export { KnowledgeParseCache, loadPack } from './load/load.js'
export type { LoadPackOptions, LoadPackResult } from './load/load.js'
export { parseKnowledgeMarkdown } from './load/parse.js'
export type { PackContext } from './load/frontmatter.js'
export type { ParsedKnowledge } from './load/parse.js'

// Tier 1: the catalog.
export { ACTIVATION_TOOL_NAME, CATALOG_INSTRUCTIONS, activationTool, discloseCatalog, renderCatalog } from './catalog/catalog.js'
export type { ActivationToolDefinition, CatalogDisclosure } from './catalog/catalog.js'

// Tier 2: activation and the pack's files.
export { GUIDE_MAX_RESOURCES, activatePack, renderGuide } from './activate/activate.js'
export type { ActivateOptions, Activation, ActivationMode } from './activate/activate.js'
export { listPackResources } from './files/resources.js'
export type { ListResourcesOptions, PackResource, ResourceKind, ResourceListing } from './files/resources.js'
export { readPackFile } from './activate/read-file.js'
export type { PackFile } from './activate/read-file.js'

// Tier 3: runtime context, wrapped as data.
export { DEFAULT_BUDGET, DEFAULT_PERSONA_SHARE, ResolveIntent, resolveContext } from './resolve/index.js'
export type {
  BudgetShares,
  CompileWarning,
  ExcludedPack,
  OmittedPiece,
  OmittedReason,
  PackResolution,
  PieceReason,
  PlanDecision,
  ResolutionAudit,
  ResolveOptions,
  ResolveResult,
  SelectedPiece,
} from './resolve/index.js'
export { PackIndex, PackIndexCache } from './pack-index/pack-index.js'
export type { PackIndexCacheOptions, PackIndexOptions } from './pack-index/pack-index.js'
export { wrapKnowledge, wrapperAttributes } from './wrap/wrap.js'
export type { WrapperAttributes } from './wrap/wrap.js'

// Choosing packs, sessions, usage logs, validation.
export { selectPacks } from './catalog/select.js'
export type { PackSelection, PackSet } from './catalog/select.js'
export { PackSession, SessionSnapshot } from './session/session.js'
export type { LoadedFileRecord, PackSessionOptions, RefreshReport, RestoreReport, SessionContext, SessionResolveOptions } from './session/session.js'
export { UsageLog, UsageRecord } from './session/usage-log.js'
export type { UsageLogOptions } from './session/usage-log.js'
export { validatePath, validateRunFile } from './validate/validate.js'
export type { PackValidationReport, RunValidationReport, ValidateOptions } from './validate/validate.js'
export { CompileRunRecord, ContextResolutionRecord, PackActivationMode, SelectionEvalRecord, SourceMapRecord } from './evidence/run-records.js'
export type { RunSchemaName } from './evidence/run-records.js'
export { contextRecord } from './session/context-record.js'

// The packs service every entry point calls.
export { createPackService } from './service.js'
export type {
  PackCatalog,
  PackDetails,
  PackDoctorReport,
  PackResolveOutcome,
  PackResolveRequest,
  PackService,
  PackServiceOptions,
  PackValidationSummary,
} from './service.js'
