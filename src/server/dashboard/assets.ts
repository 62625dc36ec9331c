/**
 * The dashboard's static files: the page shell, the bundle built by `npm run build`
 * (web/build.ts → dist/dashboard/app.js + app.css), and the API reference at /docs
 * (Swagger UI from the `swagger-ui-dist` package, served from node_modules). Everything
 * is read once, gzipped once, and served with a content hash so that browsers may keep
 * it for good. Nothing comes from a CDN.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { KnowHubError } from '../../core/errors.js'

/** One file ready to serve. */
export interface Asset {
  type: string
  body: Buffer
  gzip: Buffer
  /** A short content hash (cache busting). */
  hash: string
}

/** The default bundle folder: `dist/dashboard` of this package (the same from src/ and dist/). */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../../dist/dashboard/', import.meta.url))

function asset(type: string, body: Buffer): Asset {
  return { type, body, gzip: gzipSync(body, { level: 9 }), hash: createHash('sha256').update(body).digest('hex').slice(0, 12) }
}

/**
 * Reads the built bundle (`app.js`, `app.css`) from a folder.
 * @example
 * const bundle = loadBundle(DEFAULT_ASSETS_DIR) // { js, css }
 */
export function loadBundle(dir: string): { js: Asset; css: Asset } {
  const js = join(dir, 'app.js')
  const css = join(dir, 'app.css')
  if (!existsSync(js) || !existsSync(css)) {
    throw new KnowHubError('config_error', `The dashboard bundle is missing from ${dir}: run \`npm run build\` (it runs at install)`, { dir })
  }
  return { js: asset('text/javascript; charset=utf-8', readFileSync(js)), css: asset('text/css; charset=utf-8', readFileSync(css)) }
}

/**
 * The page every dashboard address answers: the bundle does the rest (hash routes).
 * @example
 * shellPage(loadBundle(DEFAULT_ASSETS_DIR))
 */
export function shellPage(bundle: { js: Asset; css: Asset }): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>KnowHub</title>',
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="/assets/app.css?v=${bundle.css.hash}">`,
    `<script type="module" src="/assets/app.js?v=${bundle.js.hash}"></script>`,
    '</head>',
    '<body><div id="app"><p class="boot">Loading KnowHub…</p></div></body>',
    '</html>',
  ].join('\n')
}

/** Swagger UI's files (from `swagger-ui-dist`) and the page at /docs, loaded on first use. */
export function docsAssets(): () => Map<string, Asset> {
  let files: Map<string, Asset> | undefined
  return () => {
    if (files) return files
    const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
    files = new Map([
      ['swagger-ui.css', asset('text/css; charset=utf-8', readFileSync(join(dir, 'swagger-ui.css')))],
      ['swagger-ui-bundle.js', asset('text/javascript; charset=utf-8', readFileSync(join(dir, 'swagger-ui-bundle.js')))],
      // The initializer is a file, not an inline script: the CSP allows no inline script.
      ['init.js', asset('text/javascript; charset=utf-8', Buffer.from("window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui' })\n"))],
    ])
    const page = [
      '<!doctype html>',
      '<html lang="en">',
      '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>KnowHub API reference</title>',
      '<link rel="icon" href="data:,">',
      `<link rel="stylesheet" href="/docs/swagger-ui.css?v=${files.get('swagger-ui.css')!.hash}"></head>`,
      '<body><p><a href="/">← KnowHub dashboard</a></p><div id="swagger-ui"></div>',
      `<script src="/docs/swagger-ui-bundle.js?v=${files.get('swagger-ui-bundle.js')!.hash}"></script>`,
      `<script src="/docs/init.js?v=${files.get('init.js')!.hash}"></script>`,
      '</body></html>',
    ].join('\n')
    files.set('', asset('text/html; charset=utf-8', Buffer.from(page)))
    return files
  }
}

/**
 * A response for an asset: gzipped when the client accepts it; cached for a year when
 * asked for by its hash (`?v=`), revalidated otherwise.
 * @example
 * return assetResponse(bundle.js, c.req.raw)
 */
export function assetResponse(file: Asset, request: Request): Response {
  const gzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')
  const versioned = new URL(request.url).searchParams.get('v') === file.hash
  const headers: Record<string, string> = {
    'content-type': file.type,
    'cache-control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
    vary: 'accept-encoding',
  }
  if (gzip) headers['content-encoding'] = 'gzip'
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(gzip ? file.gzip : file.body), { status: 200, headers })
}
