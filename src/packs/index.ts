/**
 * `knowhub/packs`: the Agent Knowledge pack client — discover, validate,
 * catalog, activate, resolve, wrap, sessions and usage logs, and the packs
 * service the CLI, agent tools and MCP server share. Needs no database.
 * Only the entry functions, their option and result types and the schemas
 * are exported; the steps behind them are not.
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
export { DiscoverOptions, discoverPacks, findPack } from './discover.js'
export type { DiscoveryResult, ShadowRecord } from './discover.js'
export type { ScanLocation } from './scan.js'
export { KnowledgeParseCache, loadPack } from './load.js'
export type { LoadPackOptions, LoadPackResult } from './load.js'
export { parseKnowledgeMarkdown } from './parse.js'
export type { PackContext } from './frontmatter.js'
export type { ParsedKnowledge } from './parse.js'

// Tier 1: the catalog.
export { ACTIVATION_TOOL_NAME, CATALOG_INSTRUCTIONS, activationTool, discloseCatalog, renderCatalog } from './catalog.js'
export type { ActivationToolDefinition, CatalogDisclosure } from './catalog.js'

// Tier 2: activation and the pack's files.
export { GUIDE_MAX_RESOURCES, activatePack, renderGuide } from './activate.js'
export type { ActivateOptions, Activation, ActivationMode } from './activate.js'
export { listPackResources } from './resources.js'
export type { ListResourcesOptions, PackResource, ResourceKind, ResourceListing } from './resources.js'
export { readPackFile } from './files.js'
export type { PackFile } from './files.js'

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
export { PackIndex, PackIndexCache } from './pack-index.js'
export type { PackIndexCacheOptions, PackIndexOptions } from './pack-index.js'
export { wrapKnowledge, wrapperAttributes } from './wrap.js'
export type { WrapperAttributes } from './wrap.js'

// Choosing packs, sessions, usage logs, validation.
export { selectPacks } from './select.js'
export type { PackSelection, PackSet } from './select.js'
export { PackSession, SessionSnapshot } from './session.js'
export type { LoadedFileRecord, PackSessionOptions, RefreshReport, RestoreReport, SessionContext, SessionResolveOptions } from './session.js'
export { UsageLog, UsageRecord } from './usage-log.js'
export type { UsageLogOptions } from './usage-log.js'
export { validatePath, validateRunFile } from './validate.js'
export type { PackValidationReport, RunValidationReport, ValidateOptions } from './validate.js'
export { CompileRunRecord, ContextResolutionRecord, PackActivationMode, SelectionEvalRecord, SourceMapRecord } from './run-records.js'
export type { RunSchemaName } from './run-records.js'
export { contextRecord } from './context-record.js'

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
