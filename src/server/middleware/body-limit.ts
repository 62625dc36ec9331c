/**
 * The request body limit: a body past `maxBytes` (declared or streamed) answers 413
 * `too_large`. Runs after authentication, so nothing is buffered for strangers.
 */
import { bodyLimit as honoBodyLimit } from 'hono/body-limit'
import { KnowHubError } from '../../core/errors.js'

/** Default largest request body: 2 MiB. */
export const DEFAULT_BODY_LIMIT = 2 * 1_048_576

/**
 * @example
 * app.use('*', bodyLimit({ maxBytes: 100 * 1024 }))
 */
export function bodyLimit(options: { maxBytes?: number | undefined } = {}) {
  const maxSize = options.maxBytes ?? DEFAULT_BODY_LIMIT
  return honoBodyLimit({
    maxSize,
    onError: () => {
      throw new KnowHubError('too_large', `The request body is larger than ${maxSize} bytes`, { limit: maxSize })
    },
  })
}
