/**
 * The packs' fixed word lists and the one-line diagnostic format, without their schemas: what
 * command lines and help texts need before (or without) validating anything. The schemas in
 * schema.ts and resolve/intent.ts are built from them.
 */

/**
 * The standard's pack types. Anything else must be namespaced (`custom:x`, `acme:y`) or allowed by config.
 * @example
 * STANDARD_PACK_TYPES.includes('brand-product') // true
 */
export const STANDARD_PACK_TYPES = [
  'personal-profile',
  'brand-persona',
  'brand-product',
  'organization-knowhow',
  'content-operations',
  'private-domain-operations',
  'live-commerce-operations',
  'campaign-operations',
  'growth-strategy',
  'content-ontology',
  'domain-reference',
  'research-wiki',
] as const

/** How strictly an answer must be grounded in the packs (`off` is read as `none`). */
export const GROUNDING_POLICIES = ['required', 'recommended', 'none', 'off'] as const

/** What a task needs from the packs. `cite`, `verify`, `ingest` and `dispute` unlock `sources/`. */
export const RESOLVE_INTENTS = ['answer', 'detail', 'cite', 'verify', 'ingest', 'dispute'] as const

/**
 * Formats a diagnostic (a `PackDiagnostic`) as one line: `warning name_mismatch [name]: …`.
 * @example
 * formatDiagnostic({ severity: 'warning', code: 'name_mismatch', field: 'name', message: 'x' }) // 'warning name_mismatch [name]: x'
 */
export function formatDiagnostic(diagnostic: {
  severity: string
  code: string
  field?: string | undefined
  path?: string | undefined
  message: string
}): string {
  const where = diagnostic.field ?? diagnostic.path
  return `${diagnostic.severity} ${diagnostic.code}${where ? ` [${where}]` : ''}: ${diagnostic.message}`
}
