/**
 * `knowhub/knowledge`: the knowledge-entry service (save, search, feedback, …).
 */
export {
  createKnowledgeService,
  type KnowledgeService,
  type KnowledgeServiceDeps,
  type ListPage,
  type BatchFeedbackResult,
  type ImportOptions,
  type ImportReport,
} from './service.js'
export { fuse, qualityRerank, type Fused, type RankedList, type RerankItem } from './search/rank.js'
export { searchDocument, embeddingText, textQuery } from './search/document.js'
