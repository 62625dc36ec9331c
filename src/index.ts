/**
 * `knowhub`: open a KnowHub (store + embedder + services) from a config.
 * Layers are also available on subpaths: knowhub/core, knowhub/store,
 * knowhub/knowledge, knowhub/resources, knowhub/embed, knowhub/packs,
 * knowhub/client, knowhub/tools, knowhub/mcp.
 * @example
 * import { openKnowHub } from 'knowhub'
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 */
export { openKnowHub, type KnowHub } from './app/open.js'
export * from './core/index.js'
