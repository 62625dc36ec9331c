/**
 * `knowhub`: open a KnowHub (store + embedder + services) from a config.
 * Layers are also available on subpaths: knowhub/core, knowhub/store,
 * knowhub/knowledge, knowhub/resources, knowhub/embed, knowhub/packs,
 * knowhub/client, knowhub/tools, knowhub/mcp.
 * @example
 * import { openKnowHub, localBackend } from 'knowhub'
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 * const backend = localBackend(hub, hub.config.principal) // for knowhub/tools
 */
export { openKnowHub, type KnowHub, type OpenDeps } from './app/open.js'
export { localBackend, servicesBackend, type ServicesBackendOptions, type ToolServices } from './app/backend.js'
export type { HubStatus } from './admin/status.js'
export * from './core/index.js'
