/**
 * Compact, readable tool output for a model: knowledge text wrapped as data. The wrappers
 * live in core (src/core/wrap-entries.ts) so that the agent context assembles its knowledge
 * with the very same ones.
 */
export { DATA_PREAMBLE, wrapEntries, wrapResource, type EntryView } from '../core/wrap-entries.js'
