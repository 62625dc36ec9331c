/**
 * Builds the dashboard bundle with esbuild: web/dashboard/main.ts → app.js (ES module,
 * minified) and web/dashboard/style.css → app.css, into dist/dashboard (or `--outdir`).
 * `npm run build` runs it after tsc; the browser tests build into a temp folder.
 */
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/**
 * Writes app.js and app.css into `outdir`; returns their sizes in bytes.
 * @example
 * await buildDashboard({ outdir: 'dist/dashboard' })
 */
export async function buildDashboard(options: { outdir: string; minify?: boolean }): Promise<{ js: number; css: number }> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: 'web/dashboard/main.ts' },
    bundle: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: options.minify ?? true,
    legalComments: 'none',
    outdir: options.outdir,
    metafile: true,
    logLevel: 'silent',
  })
  const css = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: 'web/dashboard/style.css' },
    bundle: true,
    minify: options.minify ?? true,
    outdir: options.outdir,
    metafile: true,
    logLevel: 'silent',
  })
  const size = (meta: typeof result.metafile, ext: string) =>
    Object.entries(meta.outputs)
      .filter(([name]) => name.endsWith(ext))
      .reduce((sum, [, out]) => sum + out.bytes, 0)
  return { js: size(result.metafile, '.js'), css: size(css.metafile, '.css') }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf('--outdir')
  const outdir = at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : 'dist/dashboard'
  const sizes = await buildDashboard({ outdir })
  console.log(`dashboard: ${outdir}/app.js ${sizes.js} B, app.css ${sizes.css} B`)
}
