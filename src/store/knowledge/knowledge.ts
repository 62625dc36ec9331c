/**
 * All SQL about knowledge entries, one file per responsibility under `knowledge/`:
 * entries (`records.ts`), feedback, versions, validity in time (`validity.ts`: supersession, expiry), import (`transfer.ts`), merges, reown, dialogue
 * neighbours (`neighbours.ts`), full-text
 * search (`search-text.ts`) and its upkeep (`search-docs.ts`), vectors
 * (`search-vector.ts`); shared row and filter SQL in `rows.ts`. Every read takes the
 * caller's visible scopes and puts them in the WHERE clause (`scopes && visible`):
 * visibility is enforced here, for search, list, get, feedback and export alike.
 */
import type { Database, Queryable } from '../database.js'
import { feedbackQueries, type KnowledgeFeedbackQueries } from './feedback.js'
import { mergeQueries, type KnowledgeMergeQueries } from './merge.js'
import { neighbourQueries, type KnowledgeNeighbourQueries } from './neighbours.js'
import { profileQueries, type KnowledgeProfileQueries } from './profile.js'
import { recordQueries, type KnowledgeRecordQueries } from './records.js'
import type { RecordCache } from './record-cache.js'
import { reownQueries, type KnowledgeReownQueries } from './reown.js'
import type { KnowledgeContext } from './rows.js'
import { searchDocQueries, type KnowledgeSearchDocQueries } from './search-docs.js'
import { textQueries, type KnowledgeTextQueries } from './search-text.js'
import { vectorQueries, type KnowledgeVectorQueries } from './search-vector.js'
import { importQueries, type KnowledgeImportQueries } from './transfer.js'
import { validityQueries, type KnowledgeValidityQueries } from './validity.js'
import { versionQueries, type KnowledgeVersionQueries } from './versions.js'
import type { SyncedTextIndex } from '../text-index/sync.js'
import type { VectorDialect } from './vectors.js'

export { TITLE_WEIGHT, type KnowledgeRecord, type SearchDocument } from './rows.js'
export type { ImportItem } from './transfer.js'
export type { IdClaim } from './records.js'
export type { ReownChange } from './reown.js'
export type { TraceNeighbours } from './neighbours.js'
export type { SupersedeChange, SupersedeRefusal, Supersession } from './validity.js'
export type {
  KnowledgeFeedbackQueries,
  KnowledgeImportQueries,
  KnowledgeMergeQueries,
  KnowledgeNeighbourQueries,
  KnowledgeProfileQueries,
  KnowledgeRecordQueries,
  KnowledgeReownQueries,
  KnowledgeSearchDocQueries,
  KnowledgeTextQueries,
  KnowledgeValidityQueries,
  KnowledgeVectorQueries,
  KnowledgeVersionQueries,
}
export {
  MAX_QUERY_TERMS,
  ANY_VALIDITY,
  DEFAULT_TEXT_RANKING,
  planTextQuery,
  textQueryBound,
  type EntryFilter,
  type TextHits,
  type RankedId,
  type TextQuery,
  type TextQueryPlan,
  type TextRanking,
  type ValidityFilter,
  type WeightedTerm,
} from '../text-index/query.js'

/** Every knowledge query: the union of the parts' query sets. */
export interface KnowledgeStore
  extends
    KnowledgeRecordQueries,
    KnowledgeImportQueries,
    KnowledgeFeedbackQueries,
    KnowledgeVersionQueries,
    KnowledgeMergeQueries,
    KnowledgeNeighbourQueries,
    KnowledgeProfileQueries,
    KnowledgeReownQueries,
    KnowledgeTextQueries,
    KnowledgeSearchDocQueries,
    KnowledgeValidityQueries,
    KnowledgeVectorQueries {}

/**
 * The knowledge queries over a database. `getDialect` gives undefined until a vector
 * table exists for the configured embedder; with `textIndex`, full-text and vector search
 * run in that in-memory index instead of SQL, and with `records` too (a cache the index's
 * sync drops changed entries from: its `onChange`), `get` and `getMany` read through it. With
 * `reads` (read replicas, src/store/replicas.ts), searches, lists and reads go there.
 * @example
 * const records = new RecordCache()
 * const knowledge = knowledgeStore(db, () => dialect, syncedTextIndex(db, { onChange: (ids) => records.drop(ids) }), records)
 * await knowledge.get(id, visibleScopes(principal))
 */
export function knowledgeStore(
  db: Database,
  getDialect: () => VectorDialect | undefined,
  textIndex?: SyncedTextIndex,
  records?: RecordCache,
  reads?: Queryable,
): KnowledgeStore {
  const context: KnowledgeContext = { db, getDialect, ...(reads ? { reads } : {}) }
  return {
    ...recordQueries(context, textIndex && records ? { cache: records, sync: () => textIndex.sync() } : undefined),
    ...importQueries(context),
    ...feedbackQueries(context),
    ...versionQueries(context),
    ...mergeQueries(context),
    ...neighbourQueries(context, textIndex),
    ...reownQueries(context),
    ...profileQueries(context),
    ...textQueries(context, textIndex),
    ...searchDocQueries(context, textIndex !== undefined),
    ...vectorQueries(context, textIndex),
    ...validityQueries(context),
  }
}
