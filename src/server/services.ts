/**
 * The services the routes use, as the composition root builds them (src/app/open.ts).
 */
export type { ResourceService as ResourceApi } from '../resources/service.js'
export type { SlimService as SlimApi } from '../knowledge/slim.js'
