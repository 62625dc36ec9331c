/**
 * Seed 002's `visibility` (private | shared | org | public), which KnowHub derives from an entry's
 * scopes and owner rather than storing apart, so the two can never disagree. The rule, the same
 * here and in SQL (`knowledge_visibility`, migration 0054):
 *
 * - `public` — the scopes include `public`;
 * - `org` — else they include an `org:` scope;
 * - `private` — else every scope is the owner's own (`user:123` owned by `user:123`);
 * - `shared` — else (a project, team, agent or another user can see it).
 *
 * A record that names its `visibility` is checked against its scopes: a clear error names both.
 */
import { z } from 'zod'
import { KnowHubError } from './errors.js'
import { VISIBILITIES } from './vocabulary.js'

export { VISIBILITIES }
export const Visibility = z.enum(VISIBILITIES)
export type Visibility = z.infer<typeof Visibility>

/**
 * An entry's visibility (see the file comment).
 * @example
 * visibilityOf(['user:123', 'project:456'], 'user:123') // 'shared'
 * visibilityOf(['user:123'], 'user:123') // 'private'
 */
export function visibilityOf(scopes: readonly string[], owner: string): Visibility {
  if (scopes.includes('public')) return 'public'
  if (scopes.some((scope) => scope.startsWith('org:'))) return 'org'
  if (scopes.every((scope) => scope === owner)) return 'private'
  return 'shared'
}

/**
 * Throws `validation_error` when a record's given `visibility` is not the one its scopes and owner
 * give, naming both and what to change.
 * @example
 * checkVisibility('org', ['user:123'], 'user:123') // throws: visibility org, but scopes user:123 make it private
 */
export function checkVisibility(given: Visibility | undefined, scopes: readonly string[], owner: string): void {
  if (given === undefined) return
  const derived = visibilityOf(scopes, owner)
  if (given === derived) return
  const message =
    `visibility is "${given}", but scopes ${scopes.join(', ')} (owner ${owner}) make it "${derived}": ` +
    `${VISIBILITY_NEEDS[given]}, or leave visibility out (KnowHub derives it from the scopes)`
  throw new KnowHubError('validation_error', `Invalid knowledge entry: ${message}`, { issues: [{ path: 'visibility', message }], visibility: given, derived })
}

const VISIBILITY_NEEDS: Record<Visibility, string> = {
  public: 'public needs the scope public',
  org: 'org needs an org:ID scope (and not public)',
  shared: "shared needs a scope other than the owner's (project:, team:, agent: or another user:), no org: and not public",
  private: "private needs the owner's own scope only",
}

/**
 * `visibility` of a list or search: a list or a comma-separated string.
 * @example
 * VisibilityFilter.parse('org,public') // ['org', 'public']
 */
export const VisibilityFilter = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(z.enum(VISIBILITIES, { error: (issue) => `unknown visibility "${String(issue.input)}" (expected ${VISIBILITIES.join(', ')})` })).min(1))
