/**
 * `GET /api/status`, `/api/tokens` (create, list, revoke), `POST /api/reown` and `POST /api/admin/backup`: the admin operations of a
 * server (src/admin/admin.ts checks each against src/auth/policy.ts's role × action table).
 */
import { Hono } from 'hono'
import type { AdminService } from '../../admin/admin.js'
import { caller, readJson, type AppEnv } from '../http.js'

/** The admin routes, mounted at `/api`. */
export function adminRoutes(admin: AdminService): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/status', async (c) => c.json(await admin.status(caller(c).principal)))
  // `local`: the CLI on this machine (the server's local key) — the only caller that may mint hub:admin.
  app.post('/tokens', async (c) => {
    const who = caller(c)
    return c.json(await admin.tokens.create(await readJson(c), who.principal, { local: who.key === 'local' }), 201)
  })
  app.get('/tokens', async (c) => c.json({ items: await admin.tokens.list(caller(c).principal) }))
  app.post('/tokens/:id/revoke', async (c) => c.json(await admin.tokens.revoke(c.req.param('id'), caller(c).principal)))
  app.post('/reown', async (c) => c.json(await admin.reown(await readJson(c), caller(c).principal)))
  // The backup file (src/store/backup.ts) as it is: `knowhub backup` beside a running server.
  app.post('/admin/backup', async (c) => {
    const { principal, key } = caller(c)
    const bytes = await admin.backup(principal, key)
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      'content-type': 'application/vnd.knowhub.backup',
      'content-disposition': 'attachment; filename="knowhub.backup"',
      'cache-control': 'no-store',
    })
  })
  return app
}
