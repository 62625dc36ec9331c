import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as packs from '../../src/packs/index.js'
import { exportsWithoutExample } from '../helpers/examples.js'

const SRC = fileURLToPath(new URL('../../src/packs/', import.meta.url))
/** Every source file of src/packs, subfolders included (e.g. resolve/). */
const sourceFiles = async (): Promise<string[]> => ((await readdir(SRC, { recursive: true })) as string[]).filter((f) => f.endsWith('.ts'))

describe('knowhub/packs public surface', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(packs).sort()).toMatchInlineSnapshot(`
      [
        "ACTIVATION_TOOL_NAME",
        "CATALOG_INSTRUCTIONS",
        "ClaimStatus",
        "DEFAULT_BUDGET",
        "DEFAULT_INDEX_CACHE_BYTES",
        "DEFAULT_MAX_FILE_BYTES",
        "DEFAULT_MAX_KNOWLEDGE_BYTES",
        "DEFAULT_MAX_SECTION_CHARS",
        "DiagnosticSeverity",
        "DiscoverOptions",
        "GUIDE_MAX_RESOURCES",
        "GroundingPolicy",
        "KnowledgeCatalogItem",
        "KnowledgeParseCache",
        "MAX_FRONTMATTER_CHARS",
        "PackDiagnostic",
        "PackDiagnosticCode",
        "PackGrounding",
        "PackIndex",
        "PackIndexCache",
        "PackProfile",
        "PackScope",
        "PackSession",
        "PackStatus",
        "PackTrust",
        "ProducedBy",
        "ProducedByKind",
        "ResolveIntent",
        "RuntimeMode",
        "SCOPE_PRECEDENCE",
        "SKIPPED_DIRS",
        "STANDARD_PACK_TYPES",
        "SessionSnapshot",
        "SourceMapClaim",
        "SourceMapSection",
        "USAGE_LOG_FILE",
        "UsageLog",
        "UsageRecord",
        "activatePack",
        "activationTool",
        "assertUsable",
        "catalogItems",
        "contextMapPaths",
        "countTokens",
        "deepCheck",
        "detectIntent",
        "discloseCatalog",
        "discoverPacks",
        "documentTerms",
        "findPack",
        "formatDiagnostic",
        "hasPersonaBoundaries",
        "isAcceptedType",
        "isIgnored",
        "isInside",
        "listPackResources",
        "loadEvidence",
        "loadPack",
        "mapLimit",
        "normalisePackPath",
        "orderWrappers",
        "packUseWarnings",
        "parseFrontmatterYaml",
        "parseGitignore",
        "parseKnowledgeMarkdown",
        "queryTerms",
        "readBounded",
        "renderCatalog",
        "renderGuide",
        "resolveContext",
        "resolvePackPath",
        "scanLocations",
        "selectPacks",
        "sha256",
        "splitFrontmatter",
        "splitMarkdown",
        "usageRecord",
        "validateFrontmatter",
        "validatePath",
        "wrapKnowledge",
        "wrapperAttributes",
      ]
    `)
  })

  it('documents every runtime export with a JSDoc @example', async () => {
    const sources = await Promise.all((await sourceFiles()).map(async (f) => readFile(join(SRC, f), 'utf8')))
    const missing = exportsWithoutExample(Object.keys(packs), sources)
    expect(missing).toEqual([])
  })

  it('library code never touches the console or process state', async () => {
    for (const file of await sourceFiles()) {
      const source = (await readFile(join(SRC, file), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
      expect(source, file).not.toMatch(/\bconsole\.|process\.(exit|exitCode|env|cwd)\b/)
    }
  })
})
