/**
 * Pins the runtime names each subpath export offers. Five have their list in their own test:
 * knowhub/packs (test/packs/exports.test.ts), knowhub/client (test/client/exports.test.ts),
 * knowhub/embed (test/embed/index.test.ts), knowhub/resources (test/core/surface.test.ts) and knowhub/agent (test/agent/exports.test.ts). A name added or removed fails here: the public surface changes
 * only on purpose, together with this list and the docs.
 */
import { describe, expect, it } from 'vitest'

const SURFACE: Record<string, string[]> = {
  'knowhub/core': [
    'BatchFeedbackInput',
    'EditKnowledgeInput',
    'EmbedderConfig',
    'ErrorCode',
    'Eval',
    'FeedbackCase',
    'FeedbackInput',
    'FeedbackRecord',
    'GENERATED_KNOWLEDGE_ID',
    'KNOWLEDGE_ID',
    'KNOWLEDGE_STATUSES',
    'KNOWLEDGE_TYPES',
    'KnowHubConfig',
    'KnowHubError',
    'KnowledgeEntry',
    'KnowledgeExportLine',
    'KnowledgeId',
    'KnowledgeStatus',
    'KnowledgeType',
    'KnowledgeVersion',
    'ListInput',
    'MAX_CONTENT_BYTES',
    'NEUTRALISED_OPENER',
    'Owner',
    'Permission',
    'Principal',
    'SCOPE_KINDS',
    'SaveKnowledgeInput',
    'Scope',
    'Score',
    'SearchExplain',
    'SearchInput',
    'SearchResponse',
    'SearchResult',
    'Source',
    'Tags',
    'WRAPPER_PREAMBLES',
    'assertScope',
    'assertWritableScopes',
    'canManage',
    'cjkBigrams',
    'cjkWords',
    'escapeXml',
    'hasCjk',
    'hasPermission',
    'isKnowHubError',
    'latinWords',
    'memberScopes',
    'neutralise',
    'newKnowledgeId',
    'noopLogger',
    'parseWith',
    'preambleLanguage',
    'qualityScore',
    'requirePermission',
    'scopePriority',
    'segment',
    'systemClock',
    'toValidationIssues',
    'visibleScopes',
  ],
  'knowhub/store': ['MIGRATIONS_DIR', 'Sql', 'loadMigrations', 'migrate', 'openPGlite', 'openPostgres', 'openStore', 'sql', 'vectorDialect'],
  'knowhub/knowledge': ['createKnowledgeService', 'embeddingText', 'fuse', 'qualityRerank', 'searchDocument', 'textQuery'],
  'knowhub/tools': [
    'DATA_PREAMBLE',
    'DEFAULT_SLIM_MODEL',
    'KNOWLEDGE_TOOLS',
    'PACK_TOOL_NAMES',
    'SEED_002_ALIASES',
    'TOOL_INDEX_CACHE',
    'ToolDefaults',
    'createToolkit',
    'defineTool',
    'isInternalToolError',
    'knowledgeBatchUpdate',
    'knowledgeExtract',
    'knowledgeList',
    'knowledgeSave',
    'knowledgeSearch',
    'knowledgeSlim',
    'knowledgeUpdate',
    'packCatalog',
    'packTools',
    'resourceGet',
    'resourceSave',
    'saveTarget',
    'toAnthropicTools',
    'toOpenAIResponsesTools',
    'toOpenAITools',
    'toolErrorText',
    'toolJsonSchema',
    'toolPackIndexCache',
    'userProfile',
    'wrapEntries',
    'wrapResource',
  ],
  'knowhub/mcp': ['PACK_URI_SCHEME', 'createMcpServer', 'handleMcpRequest', 'mcpToolError'],
}

/** The package root: everything of knowhub/core, plus the composition root. */
SURFACE.knowhub = [...SURFACE['knowhub/core']!, 'localBackend', 'openKnowHub', 'servicesBackend']
// The Vercel AI SDK's tools and the goal-focus helper (docs/integrations.md; `ai` an optional peer).
SURFACE['knowhub/ai-sdk'] = ['knowhubTools', 'withGoalFocus']

const SOURCES: Record<string, () => Promise<Record<string, unknown>>> = {
  knowhub: () => import('../../src/index.js'),
  'knowhub/core': () => import('../../src/core/index.js'),
  'knowhub/store': () => import('../../src/store/index.js'),
  'knowhub/knowledge': () => import('../../src/knowledge/index.js'),
  'knowhub/tools': () => import('../../src/tools/index.js'),
  'knowhub/mcp': () => import('../../src/mcp/index.js'),
  'knowhub/ai-sdk': () => import('../../src/ai-sdk/index.js'),
}

describe('public surface', () => {
  for (const [subpath, names] of Object.entries(SURFACE)) {
    it(`${subpath} exports exactly its pinned names`, async () => {
      const module = await SOURCES[subpath]!()
      expect(Object.keys(module).sort()).toEqual([...names].sort())
    })
  }

  it('pins every subpath of the export map here or in its own test', async () => {
    const { readFileSync } = await import('node:fs')
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> }
    const subpaths = Object.keys(pkg.exports)
      .filter((key) => !['./package.json', './packs', './client', './embed', './resources', './agent'].includes(key))
      .map((key) => (key === '.' ? 'knowhub' : `knowhub/${key.slice(2)}`))
    expect(Object.keys(SURFACE).sort()).toEqual(subpaths.sort())
  })
})
