/** A source of time, passed to services so tests can control it. */
export interface Clock {
  now(): Date
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() }
