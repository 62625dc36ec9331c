/**
 * The knowledge service: one object over the parts of this folder — entries (save, get,
 * list, edit, archive, delete: entries.ts), feedback (feedback.ts), search (search.ts),
 * export/import (transfer.ts), reown (reown.ts) and reindex (reindex.ts) — sharing one context (context.ts).
 * Every operation takes the calling principal; visibility is enforced by the store's queries.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import {
  MAX_CONTENT_BYTES,
  type FeedbackResponse,
  type KnowledgeEntry,
  type KnowledgeVersion,
  type ReownResult,
  type SearchResponse,
  type SupersedeResult,
} from '../core/knowledge.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import type { Principal } from '../core/principal.js'
import type { EntryView } from '../core/wrap-entries.js'
import type { Embedder } from '../embed/embedder.js'
import type { LlmProvider } from '../llm/index.js'
import type { Store, VectorState } from '../store/store.js'
import { activeViews, profileViews } from './entries/agent-views.js'
import { createKnowledgeContext } from './context.js'
import type { GroundingOptions } from './grounding.js'
import { deleteEntry, editEntry, entryVersions, getEntry, listEntries, saveEntry, setEntryStatus, type ListPage } from './entries/entries.js'
import { batchFeedback, giveFeedback, type BatchFeedbackResult } from './entries/feedback.js'
import type { ImportReport } from './transfer/jsonl.js'
import { knowledgeOverview, type KnowledgeOverviewCounts } from './entries/overview.js'
import { refreshSearchDocs, reindexEntries } from './search/reindex.js'
import { reownEntries } from './entries/reown.js'
import { supersedeEntry } from './entries/supersede.js'
import { createKnowledgeSearch, type SearchOptions, type SearchUse } from './search/search.js'
import { exportEntries, importEntries, type ImportJsonlOptions } from './transfer/transfer.js'
import type { FolderFile, FolderImportQuery, FolderImportReport, FolderSyncResult } from '../core/knowledge-folder.js'
import { importFolderZip } from './folder/archive.js'
import { exportFolder } from './folder/export.js'
import { importFolder } from './folder/import.js'
import { syncFolder } from './folder/sync.js'

export type { ListPage } from './entries/entries.js'
export type { BatchFeedbackResult } from './entries/feedback.js'
export type { ImportOptions, ImportReport } from './transfer/jsonl.js'
export type { ImportJsonlOptions } from './transfer/transfer.js'
export type { KnowledgeOverviewCounts } from './entries/overview.js'
export type { FolderImportOptions } from './folder/import.js'
export {
  DEFAULT_FUSION,
  DEFAULT_NEIGHBOUR_LIFT,
  DEFAULT_SEARCH_DEPTH,
  type FusionOptions,
  type SearchDepth,
  type SearchOptions,
  type SearchUse,
} from './search/search.js'

export interface KnowledgeServiceDeps extends SearchOptions {
  store: Store
  embedder: Embedder
  logger?: Logger
  clock?: Clock
  /** Largest content in UTF-8 bytes (default 1 MiB). */
  maxContentBytes?: number
  /** The chat model behind `evolve_feedback` and extraction (absent: `llm_not_configured`). */
  llm?: LlmProvider
  /** How an evolved content is judged against the old content and the feedback (default: the rule's thresholds, no embedding similarity). */
  grounding?: GroundingOptions
}

/** The knowledge service (see {@link createKnowledgeService}). */
export interface KnowledgeService {
  /** The vector index state (ready, or a mismatch that `reindex` fixes). */
  vectorState(): VectorState
  /** How search reads the embedder's similarities: a learned table, the offline embedders' own floors, or the self-calibration rule. */
  calibration(): { source: 'builtin' | 'table' | 'self' | 'none'; name: string }
  /** Builds the embedded store's in-memory full-text index ahead of the first search. */
  warmUp(): Promise<void>
  /** How many entries are stored (any status; any scope for the operators' status, or those visible through `visible`). */
  count(visible?: readonly string[]): Promise<number>
  /** What the caller sees, counted by status, type and scope, with saves and feedback per day (the dashboard's overview). */
  overview(principal: Principal, options?: { days?: number }): Promise<KnowledgeOverviewCounts>
  /** Up to `limit` `user_profile` entries the caller sees, most confident first (an agent's context). */
  profileViews(principal: Principal, limit: number): Promise<EntryView[]>
  /** The active entries among `ids` the caller sees, in that order (a goal's attached knowledge). */
  activeViews(ids: readonly string[], principal: Principal): Promise<EntryView[]>
  save(raw: unknown, principal: Principal): Promise<KnowledgeEntry>
  get(id: string, principal: Principal): Promise<KnowledgeEntry>
  /** Previous versions of an entry, oldest first. */
  versions(id: string, principal: Principal): Promise<KnowledgeVersion[]>
  /** Newest first, with cursor pagination. */
  list(raw: unknown, principal: Principal): Promise<ListPage>
  /** Edits task, content, types, tags, scopes or resources (owner or admin); the previous version is kept. */
  edit(id: string, raw: unknown, principal: Principal): Promise<KnowledgeEntry>
  /** Seed 003 feedback: helpful/harmful case, score, evolve; or `supersede_with` (issue 31). */
  feedback(id: string, raw: unknown, principal: Principal): Promise<FeedbackResponse>
  /**
   * Supersedes entry `id` (`SupersedeInput`: `by`, an entry id or a new entry's body; `valid_to`),
   * in one transaction (issue 31): whoever may edit both entries.
   */
  supersede(id: string, raw: unknown, principal: Principal): Promise<SupersedeResult>
  batchFeedback(raw: unknown, principal: Principal): Promise<BatchFeedbackResult>
  /** Hidden from search and list, kept in full (owner or admin). */
  archive(id: string, principal: Principal): Promise<KnowledgeEntry>
  /** Makes an archived or merged entry active again (owner or admin). */
  restore(id: string, principal: Principal): Promise<KnowledgeEntry>
  /** Deletes an entry and its history for good (owner or admin). */
  delete(id: string, principal: Principal): Promise<void>
  /** `use`: what the search is for beside its request (an injection into an agent's context: {@link SearchUse}). */
  search(raw: unknown, principal: Principal, use?: SearchUse): Promise<SearchResponse>
  exportJsonl(principal: Principal, options?: { batchSize?: number }): AsyncGenerator<string>
  /** JSONL as `exportJsonl` writes it; `options`: the import query (`mode`, `on_conflict`), progress, batch size. */
  importJsonl(lines: AsyncIterable<string> | Iterable<string>, principal: Principal, options?: ImportJsonlOptions): Promise<ImportReport>
  /** The caller's knowledge folder (seed 002's layout, docs/knowledge-folder.md) as files. */
  exportFolder(principal: Principal): Promise<FolderFile[]>
  /** Imports a knowledge folder's files: adds, new versions for changes, archives removed entries with `prune`. */
  importFolder(files: readonly FolderFile[], principal: Principal, query?: FolderImportQuery): Promise<FolderImportReport>
  /** Imports a knowledge folder as a zip: the right to write is checked first, then the zip is inflated off the event loop within `ZIP_LIMITS`. */
  importFolderZip(bytes: Uint8Array, principal: Principal, query?: FolderImportQuery): Promise<FolderImportReport>
  /** One sync step with a knowledge folder (`FolderSyncInput`: files, state, prune, dry_run): conflicts keep both sides. */
  syncFolder(raw: unknown, principal: Principal): Promise<FolderSyncResult>
  /** Admin: gives every entry of one owner a new owner and/or added scopes (`ReownInput`); each change keeps the previous version. */
  reown(raw: unknown, principal: Principal): Promise<ReownResult>
  /**
   * After an erasure (forget, purge): empties this process's search caches and brings the
   * store's record cache and in-memory index up to date; returns the names of the caches touched.
   */
  refreshCaches(entryIds: readonly string[]): Promise<string[]>
  /** Re-embeds every entry with the configured embedder; returns how many. */
  reindex(options?: { onProgress?: (done: number, total: number) => void; batchSize?: number }): Promise<number>
}

/**
 * Creates the knowledge service, prepares the vector index for the embedder and rebuilds
 * full-text documents stored in an older format.
 * @example
 * const knowledge = await createKnowledgeService({ store, embedder })
 * const entry = await knowledge.save({ task: 'Log in to site A', content: 'Use the test account…', types: ['tool'] }, principal)
 */
export async function createKnowledgeService(deps: KnowledgeServiceDeps): Promise<KnowledgeService> {
  const ctx = await createKnowledgeContext({
    store: deps.store,
    embedder: deps.embedder,
    logger: deps.logger ?? noopLogger,
    clock: deps.clock ?? systemClock,
    maxContentBytes: deps.maxContentBytes ?? MAX_CONTENT_BYTES,
    llm: deps.llm,
    grounding: deps.grounding,
  })
  await refreshSearchDocs(ctx)
  const { search, warmUp, clearCaches, calibration } = createKnowledgeSearch(ctx, deps)
  return {
    vectorState: () => ctx.vectorState(),
    calibration,
    warmUp,
    count: (visible) => ctx.store.knowledge.count(visible),
    overview: (principal, options) => knowledgeOverview(ctx, principal, options),
    profileViews: (principal, limit) => profileViews(ctx, principal, limit),
    activeViews: (ids, principal) => activeViews(ctx, ids, principal),
    search,
    save: (raw, principal) => saveEntry(ctx, raw, principal),
    get: (id, principal) => getEntry(ctx, id, principal),
    versions: (id, principal) => entryVersions(ctx, id, principal),
    list: (raw, principal) => listEntries(ctx, raw, principal),
    edit: (id, raw, principal) => editEntry(ctx, id, raw, principal),
    feedback: (id, raw, principal) => giveFeedback(ctx, id, raw, principal),
    supersede: (id, raw, principal) => supersedeEntry(ctx, id, raw, principal),
    batchFeedback: (raw, principal) => batchFeedback(ctx, raw, principal),
    archive: (id, principal) => setEntryStatus(ctx, id, 'archived', principal),
    restore: (id, principal) => setEntryStatus(ctx, id, 'active', principal),
    delete: (id, principal) => deleteEntry(ctx, id, principal),
    exportJsonl: (principal, options) => exportEntries(ctx, principal, options),
    importJsonl: (lines, principal, options) => importEntries(ctx, lines, principal, options),
    exportFolder: (principal) => exportFolder(ctx, principal),
    importFolder: (files, principal, options) => importFolder(ctx, files, principal, options),
    importFolderZip: (bytes, principal, options) => importFolderZip(ctx, bytes, principal, options),
    syncFolder: (raw, principal) => syncFolder(ctx, raw, principal),
    reown: (raw, principal) => reownEntries(ctx, raw, principal),
    reindex: (options) => reindexEntries(ctx, options),
    refreshCaches: async (entryIds) => [...clearCaches(), ...(await ctx.store.refreshCaches(entryIds))],
  }
}
