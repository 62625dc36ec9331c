/**
 * Bundles the command line (dist/cli/main.js and everything it imports) into dist/bundle with
 * esbuild, for bin/knowhub.js: a few ES modules instead of ~360 (~250 of dist/ and ~110 of
 * zod, hono, commander and the MCP SDK), which Node 20 otherwise resolves, reads, compiles and
 * links one by one at every start (no module compile cache). Dynamic imports stay chunks loaded on
 * use, so `--help` loads no server. `npm run build` runs it after tsc; dist/ keeps the library.
 *
 * Bundled code keeps the location it was compiled to: each `import.meta.url` becomes the URL of
 * its file under dist/ (../../package.json, ../../migrations/ and the dashboard's assets resolve
 * as before). Packages that find files beside themselves, are native, or that the code loads
 * with `createRequire` stay outside, resolved from node_modules as before.
 */
import { rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Packages left to node_modules: file assets (PGlite, the model, swagger-ui), native or optional parts (pg), or loaded with createRequire. */
export const EXTERNAL = ['@electric-sql/*', '@energetic-ai/*', 'pino', 'pino-pretty', 'pg', 'swagger-ui-dist', 'cli-progress', 'yaml', 'gpt-tokenizer']

/** Rewrites `import.meta.url` in each file of `dist` to that file's own URL, relative to the bundle's. */
function ownImportMetaUrl(dist: string, outdir: string): Plugin {
  return {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(dist)) return undefined
        const code = await readFile(args.path, 'utf8')
        if (!code.includes('import.meta.url')) return { contents: code, loader: 'js' }
        const own = `new URL(${JSON.stringify(relative(outdir, args.path).split('\\').join('/'))}, import.meta.url).href`
        return { contents: code.replaceAll('import.meta.url', own), loader: 'js' }
      })
    },
  }
}

/**
 * Writes `<dist>/bundle/knowhub.js` (exports `main`) and its chunks from the compiled `dist`
 * (default dist/); returns their count and bytes.
 * @example
 * await bundleCli() // after tsc has written dist/
 */
export async function bundleCli(options: { dist?: string } = {}): Promise<{ files: number; bytes: number }> {
  const dist = resolve(ROOT, options.dist ?? 'dist')
  const outdir = join(dist, 'bundle')
  // Chunk names carry content hashes: the chunks of an earlier build go first.
  rmSync(outdir, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { knowhub: join(dist, 'cli', 'main.js') },
    // The packages of this checkout, also for a dist/ compiled elsewhere (test/core/surface.test.ts).
    nodePaths: [join(ROOT, 'node_modules')],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    external: EXTERNAL,
    // CommonJS packages in the bundle (commander, the MCP SDK's ajv) call require for Node's modules.
    banner: { js: "import { createRequire as __knowhubCreateRequire } from 'node:module'; const require = __knowhubCreateRequire(import.meta.url);" },
    plugins: [ownImportMetaUrl(dist + sep, outdir)],
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  })
  const outputs = Object.values(result.metafile.outputs)
  return { files: outputs.length, bytes: outputs.reduce((sum, output) => sum + output.bytes, 0) }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, bytes } = await bundleCli()
  console.log(`cli bundle: dist/bundle/knowhub.js and ${files - 1} chunks, ${bytes} B`)
}
