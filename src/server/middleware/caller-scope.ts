/**
 * Runs the rest of a request in its caller's database scope, so that the store can send its
 * reads to a read replica and still show the caller its own writes (src/store/replicas.ts;
 * docs/scale.md, "Read replicas"). Only GET and HEAD requests may read from a replica; a
 * request that may write reads from the primary throughout. Installed only when replicas are
 * configured.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../http.js'

/** The store's side: `run` of the replica router. */
export interface CallerScope {
  run<T>(caller: string, readOnly: boolean, fn: () => Promise<T>): Promise<T>
}

/**
 * @example
 * if (hub.store.replicas) app.use('*', callerScope({ scope: hub.store.replicas }))
 */
export function callerScope(options: { scope: CallerScope }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const caller = c.get('caller') as AppEnv['Variables']['caller'] | undefined
    if (!caller) return next()
    const readOnly = c.req.method === 'GET' || c.req.method === 'HEAD'
    await options.scope.run(caller.key, readOnly, () => next())
  })
}
