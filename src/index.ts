/**
 * `knowhub`: open a KnowHub (store + embedder + services) from a config.
 * Layers are also available on subpaths: knowhub/core, knowhub/store,
 * knowhub/knowledge, knowhub/embed, knowhub/packs.
 * @example
 * import { openKnowHub } from 'knowhub'
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 */
export { openKnowHub, type KnowHub } from './app/open.js'
export * from './core/index.js'
