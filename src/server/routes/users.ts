/**
 * Forgetting, retention and profiles (issue 31): `DELETE /api/principals/{principal}` (forget a
 * user: `user:ID`; `?dry_run=true` counts only), `POST /api/admin/purge` (merged and archived
 * entries for good) and `GET /api/users/{id}/profile` (a user's profile, current view). The
 * services check each against src/auth/policy.ts's role × action table.
 */
import { Hono } from 'hono'
import type { ErasureService } from '../../users/erasure.js'
import type { UsersService } from '../../users/profile.js'
import { caller, queryBoolean, readJson, type AppEnv } from '../http.js'

/** The routes, mounted at `/api`. */
export function userRoutes(deps: { erasure: ErasureService; users: UsersService }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.delete('/principals/:principal', async (c) =>
    c.json(await deps.erasure.forget(caller(c).principal, c.req.param('principal'), { dryRun: queryBoolean(c, 'dry_run', false) })),
  )
  app.post('/admin/purge', async (c) => c.json(await deps.erasure.purge(caller(c).principal, await readJson(c))))
  app.get('/users/:id/profile', async (c) => c.json(await deps.users.profile(caller(c).principal, c.req.param('id'))))
  return app
}
