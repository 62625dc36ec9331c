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
    // Entry functions, their schemas and constants; the steps behind them (paths, lexical, sections, evidence, scan, …) stay internal.
    expect(Object.keys(packs).sort()).toEqual([
      'ACTIVATION_TOOL_NAME',
      'CATALOG_INSTRUCTIONS',
      'CompileRunRecord',
      'ContextResolutionRecord',
      'DEFAULT_BUDGET',
      'DEFAULT_PERSONA_SHARE',
      'DiscoverOptions',
      'GUIDE_MAX_RESOURCES',
      'GroundingPolicy',
      'KnowledgeCatalogItem',
      'KnowledgeParseCache',
      'PackActivationMode',
      'PackDiagnostic',
      'PackGrounding',
      'PackIndex',
      'PackIndexCache',
      'PackProfile',
      'PackScope',
      'PackSession',
      'PackStatus',
      'PackTrust',
      'ProducedBy',
      'ResolveIntent',
      'RuntimeMode',
      'STANDARD_PACK_TYPES',
      'SelectionEvalRecord',
      'SessionSnapshot',
      'SourceMapRecord',
      'UsageLog',
      'UsageRecord',
      'activatePack',
      'activationTool',
      'contextRecord',
      'createPackService',
      'discloseCatalog',
      'discoverPacks',
      'findPack',
      'formatDiagnostic',
      'listPackResources',
      'loadPack',
      'parseKnowledgeMarkdown',
      'readPackFile',
      'renderCatalog',
      'renderGuide',
      'resolveContext',
      'selectPacks',
      'validatePath',
      'validateRunFile',
      'wrapKnowledge',
      'wrapperAttributes',
    ])
  })

  it('documents every runtime export with a JSDoc @example', async () => {
    const sources = await Promise.all((await sourceFiles()).map(async (f) => readFile(join(SRC, f), 'utf8')))
    const missing = exportsWithoutExample(Object.keys(packs), sources)
    expect(missing).toEqual([])
  })

  it('depends only downward: the core, embedder types and its own modules', async () => {
    const upward: string[] = []
    for (const file of await sourceFiles()) {
      const source = await readFile(join(SRC, file), 'utf8')
      for (const [, kind, specifier] of source.matchAll(/\b(import type|import|export)\s[^'";]*?from '(\.\.?\/[^']+)'/g)) {
        const target = join(SRC, file, '..', specifier as string)
        if (target.startsWith(SRC) || /\/src\/core\//.test(target)) continue
        if (kind === 'import type' && target.endsWith('/src/embed/embedder.js')) continue
        upward.push(`${file} → ${specifier}`)
      }
    }
    expect(upward).toEqual([])
  })

  it('library code never touches the console or process state', async () => {
    for (const file of await sourceFiles()) {
      const source = (await readFile(join(SRC, file), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
      expect(source, file).not.toMatch(/\bconsole\.|process\.(exit|exitCode|env|cwd)\b/)
    }
  })
})
