/**
 * The knowledge folder over HTTP (docs/knowledge-folder.md), mounted at `/api/knowledge/folder`:
 * `GET` the caller's folder as a zip (the dashboard's download) or, with `format=json`, as
 * files; `POST /import` a folder (JSON files, or a zip body); `POST /sync` one sync step
 * (JSON both ways: files and state in, the folder to write and the new state out).
 */
import { Hono } from 'hono'
import { KnowHubError } from '../../core/errors.js'
import { FolderImportBody, type FolderFiles, type FolderImportReport, type FolderSyncResult } from '../../core/knowledge-folder.js'
import { parseWith } from '../../core/validate.js'
import { zipFolder } from '../../knowledge/folder/archive.js'
import type { KnowledgeService } from '../../knowledge/service.js'
import { caller, queryObject, readJson, type AppEnv } from '../http.js'

/**
 * @example
 * app.route('/api/knowledge/folder', knowledgeFolderRoutes({ knowledge }))
 */
export function knowledgeFolderRoutes({ knowledge }: { knowledge: KnowledgeService }) {
  const app = new Hono<AppEnv>()

  app.get('/', async (c) => {
    const format = c.req.query('format') ?? 'zip'
    if (format !== 'zip' && format !== 'json') throw new KnowHubError('validation_error', `format is zip or json, not "${format}"`)
    const files = await knowledge.exportFolder(caller(c).principal)
    if (format === 'json') return c.json({ files } satisfies FolderFiles)
    return c.body(new Uint8Array(zipFolder(files)), 200, {
      'content-type': 'application/zip',
      'content-disposition': 'attachment; filename="knowledge-folder.zip"',
    })
  })

  app.post('/import', async (c) => {
    const query = queryObject(c, { booleans: ['dry_run', 'partial', 'prune'] })
    const { principal } = caller(c)
    const zip = (c.req.header('content-type') ?? '').startsWith('application/zip')
    // A zip is checked by the service before anything is inflated: the right to write first, then its directory and real sizes.
    const report = zip
      ? await knowledge.importFolderZip(new Uint8Array(await c.req.arrayBuffer()), principal, query)
      : await knowledge.importFolder(parseWith(FolderImportBody, await readJson(c), 'folder import').files, principal, query)
    return c.json(report satisfies FolderImportReport)
  })

  app.post('/sync', async (c) => c.json((await knowledge.syncFolder(await readJson(c), caller(c).principal)) satisfies FolderSyncResult))

  return app
}
