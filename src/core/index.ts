/**
 * `knowhub/core`: types, schemas, errors, principals and scopes, ids, text
 * segmentation, knowledge text wrapped as data. No I/O: safe in any runtime.
 */
export { ErrorCode, KnowHubError, isKnowHubError, type ErrorDetails } from './errors.js'
export { noopLogger, type Logger, type LogFields } from './logger.js'
export { systemClock, type Clock } from './clock.js'
export { newKnowledgeId, GENERATED_KNOWLEDGE_ID, KNOWLEDGE_ID } from './ids.js'
export {
  Principal,
  Permission,
  Scope,
  Owner,
  SCOPE_KINDS,
  type ScopeKind,
  assertScope,
  assertWritableScopes,
  canManage,
  hasPermission,
  memberScopes,
  requirePermission,
  scopePriority,
  visibleScopes,
} from './principal.js'
export {
  KNOWLEDGE_TYPES,
  KNOWLEDGE_STATUSES,
  MAX_CONTENT_BYTES,
  BatchFeedbackInput,
  EditKnowledgeInput,
  Eval,
  FeedbackCase,
  FeedbackInput,
  FeedbackRecord,
  KnowledgeEntry,
  KnowledgeExportLine,
  KnowledgeId,
  KnowledgeStatus,
  KnowledgeType,
  KnowledgeVersion,
  ListInput,
  SaveKnowledgeInput,
  Score,
  SearchExplain,
  SearchInput,
  SearchResponse,
  SearchResult,
  Source,
  Tags,
  qualityScore,
} from './knowledge.js'
export { EmbedderConfig, KnowHubConfig } from './config.js'
export { parseWith, toValidationIssues, type ValidationIssue } from './validate.js'
export { segment, hasCjk, latinWords, cjkWords, cjkBigrams, type Segments } from './text/index.js'
export { NEUTRALISED_OPENER, WRAPPER_PREAMBLES, escapeXml, neutralise, preambleLanguage } from './wrap.js'
export type { AgentBackend, AgentWhere, BackendImportOptions, KnowHubBackend, LocalAgentFiles, ResourceTarget } from './backend.js'
