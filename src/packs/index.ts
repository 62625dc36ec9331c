/**
 * `knowhub/packs`: the Agent Knowledge pack client — discover, validate,
 * catalog, activate, resolve, wrap, log. Needs no database.
 *
 * @example
 * import { discoverPacks, discloseCatalog, PackSession } from 'knowhub/packs'
 * const found = await discoverPacks({ projectDir: process.cwd(), homeDir: os.homedir() })
 * const { catalog, instruction, tool } = discloseCatalog(found.packs.map((p) => p.item))
 * const session = await PackSession.create({ packs: found.packs })
 * await session.activate('acme-product-brief')
 * const { context } = await session.resolve('What is the enterprise price?', { budget: 8000 })
 */
export {
  DiagnosticSeverity,
  GroundingPolicy,
  KnowledgeCatalogItem,
  PackDiagnostic,
  PackDiagnosticCode,
  PackGrounding,
  PackProfile,
  PackScope,
  PackStatus,
  PackTrust,
  ProducedBy,
  ProducedByKind,
  RuntimeMode,
  SCOPE_PRECEDENCE,
  STANDARD_PACK_TYPES,
  formatDiagnostic,
} from './schema.js'
export type { LoadedPack, RejectedPack } from './schema.js'
export { MAX_FRONTMATTER_CHARS, isAcceptedType, parseFrontmatterYaml, parseKnowledgeMarkdown, splitFrontmatter, validateFrontmatter } from './parse.js'
export type { FrontmatterValidation, PackContext, ParsedKnowledge, ParsedYaml, SplitFrontmatter } from './parse.js'
export { DEFAULT_MAX_FILE_BYTES, isInside, normalisePackPath, readBounded, resolvePackPath, sha256 } from './paths.js'
export type { BoundedRead, NormalisedPath, ResolvedPackPath } from './paths.js'
export { DEFAULT_MAX_KNOWLEDGE_BYTES, KnowledgeParseCache, loadPack } from './load.js'
export type { LoadPackOptions, LoadPackResult } from './load.js'
export { DiscoverOptions, catalogItems, discoverPacks, findPack, scanLocations } from './discover.js'
export { SKIPPED_DIRS } from './scan.js'
export type { ScanLocation } from './scan.js'
export type { DiscoveryResult, ShadowRecord } from './discover.js'
export { isIgnored, parseGitignore } from './gitignore.js'
export type { GitignoreRule } from './gitignore.js'
export { mapLimit } from './limit.js'
export { ACTIVATION_TOOL_NAME, CATALOG_INSTRUCTIONS, activationTool, discloseCatalog, renderCatalog } from './catalog.js'
export type { ActivationToolDefinition, CatalogDisclosure } from './catalog.js'
export { listPackResources } from './resources.js'
export type { ListResourcesOptions, PackResource, ResourceKind, ResourceListing } from './resources.js'
export { GUIDE_MAX_RESOURCES, activatePack, assertUsable, hasPersonaBoundaries, packUseWarnings, renderGuide } from './activate.js'
export type { ActivateOptions, Activation, ActivationMode } from './activate.js'
export { orderWrappers, wrapKnowledge, wrapperAttributes } from './wrap.js'
export type { WrapperAttributes } from './wrap.js'
export { DEFAULT_MAX_SECTION_CHARS, splitMarkdown } from './sections.js'
export type { MarkdownSection } from './sections.js'
export { documentTerms, queryTerms } from './lexical.js'
export type { WeightedTerm } from './lexical.js'
export { countTokens } from './tokens.js'
export { ClaimStatus, SourceMapClaim, SourceMapSection, loadEvidence } from './evidence.js'
export type { CheckedClaim, CompileRunSummary, PackEvidence } from './evidence.js'
export { DEFAULT_INDEX_CACHE_BYTES, PackIndex, PackIndexCache } from './pack-index.js'
export type { IndexedFile, IndexedSection, PackIndexCacheOptions, PackIndexOptions } from './pack-index.js'
export { DEFAULT_BUDGET, ResolveIntent, contextMapPaths, detectIntent, resolveContext } from './resolve/index.js'
export type {
  CompileWarning,
  ExcludedPack,
  OmittedPiece,
  OmittedReason,
  PackResolution,
  PieceReason,
  ResolutionAudit,
  ResolveOptions,
  ResolveResult,
  SelectedPiece,
} from './resolve/index.js'
export { selectPacks } from './select.js'
export { PackSession, SessionSnapshot } from './session.js'
export type { LoadedFileRecord, PackSessionOptions, RefreshReport, RestoreReport, SessionContext, SessionResolveOptions } from './session.js'
export { USAGE_LOG_FILE, UsageLog, UsageRecord, usageRecord } from './usage-log.js'
export type { UsageLogOptions } from './usage-log.js'
export { deepCheck, validatePath } from './validate.js'
export type { PackValidationReport, ValidateOptions } from './validate.js'
