/**
 * The admin routes at `/api`: the table's operations (src/core/operations.ts: status, tokens, reown,
 * forget, purge), mounted by the generic loop of ./operations.ts, each only when this server has
 * its service; and `POST /api/admin/backup`, whose answer is the backup file's bytes. The admin and
 * erasure services check each against src/auth/policy.ts's role × action table.
 */
import { Hono } from 'hono'
import { ADMIN_OPERATIONS, TOKEN_OPERATIONS } from '../../core/operations.js'
import { caller, type AppEnv } from '../http.js'
import { mountOperations, type OperationServices } from './operations.js'

/** The admin routes, mounted at `/api`. */
export function adminRoutes(services: OperationServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  mountOperations(app, '/api', ADMIN_OPERATIONS, services)
  mountOperations(app, '/api', TOKEN_OPERATIONS, services)
  // The backup file (src/store/backup.ts) as it is: `knowhub backup` beside a running server.
  const { admin } = services
  if (admin) {
    app.post('/admin/backup', async (c) => {
      const { principal, key } = caller(c)
      const bytes = await admin.backup(principal, key)
      return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
        'content-type': 'application/vnd.knowhub.backup',
        'content-disposition': 'attachment; filename="knowhub.backup"',
        'cache-control': 'no-store',
      })
    })
  }
  return app
}
