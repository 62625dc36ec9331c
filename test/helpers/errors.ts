/** Error helpers for tests. */
import { isKnowHubError, type KnowHubError } from '../../src/core/errors.js'

/** Awaits `promise` and returns the KnowHubError it rejects with; anything else fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<KnowHubError> {
  try {
    await promise
  } catch (error) {
    if (isKnowHubError(error)) return error
    throw error
  }
  throw new Error('expected a rejection')
}
