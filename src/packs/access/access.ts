/**
 * Who sees which server-side packs, and what a remote caller is shown of where they are.
 *
 * - Access: `packs.access` rules (see `PackAccessRule` in core/config) give a pack root to
 *   listed scopes; the longest rule root containing a pack decides; a pack under no rule is
 *   every principal's. A pack a principal may not see is absent for it: not in the catalog,
 *   `not_found` by name, exactly as a pack that does not exist.
 * - Paths: a remote caller (HTTP, `/mcp`, the dashboard) sees `packs/<name>/…` for a pack's
 *   files and `<scope>-packs` for a discovery location, never the server's absolute paths.
 */
import { realpathSync } from 'node:fs'
import { basename, dirname, resolve, sep } from 'node:path'
import type { PackAccessRule } from '../../core/config.js'
import { hasPermission, memberScopes, type Principal } from '../../core/principal.js'
import type { DiscoveryResult } from '../discover/discover.js'

/** A rule with its root resolved (as written and with symlinks resolved). */
export interface ResolvedAccessRule {
  roots: string[]
  allow: ReadonlySet<string>
  permission?: PackAccessRule['permission']
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/**
 * Resolves the roots of `packs.access` rules against `cwd`.
 * @example
 * const rules = resolveAccessRules([{ root: '/srv/packs/acme', allow: ['org:acme'] }], process.cwd())
 */
export function resolveAccessRules(rules: readonly PackAccessRule[], cwd: string): ResolvedAccessRule[] {
  return rules.map((rule) => {
    const root = resolve(cwd, rule.root)
    return { roots: [...new Set([root, realOrSame(root)])], allow: new Set(rule.allow), ...(rule.permission ? { permission: rule.permission } : {}) }
  })
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

/** The rule governing a path: the one whose root is the longest containing it. */
function governing(rules: readonly ResolvedAccessRule[], paths: readonly string[]): ResolvedAccessRule | undefined {
  let best: { rule: ResolvedAccessRule; length: number } | undefined
  for (const rule of rules) {
    for (const root of rule.roots) {
      if (paths.some((p) => inside(root, p)) && (!best || root.length > best.length)) best = { rule, length: root.length }
    }
  }
  return best?.rule
}

/**
 * Whether `principal` may see a pack at these paths (its root, its real root).
 * @example
 * if (!maySeePack(rules, [pack.item.packRoot, pack.realRoot], principal)) throw notFound
 */
export function maySeePack(rules: readonly ResolvedAccessRule[], paths: readonly string[], principal: Principal): boolean {
  const rule = governing(rules, paths)
  if (!rule) return true
  if (rule.permission && !hasPermission(principal, rule.permission)) return false
  return rule.allow.has('public') || memberScopes(principal).some((scope) => rule.allow.has(scope))
}

/**
 * A discovery result cut to what `principal` may see: packs, archived, rejected, shadow
 * records and diagnostics about a hidden pack's folder are left out.
 */
export function restrictDiscovery(found: DiscoveryResult, rules: readonly ResolvedAccessRule[], principal: Principal): DiscoveryResult {
  if (rules.length === 0) return found
  const sees = (...paths: (string | undefined)[]) =>
    maySeePack(
      rules,
      paths.filter((p): p is string => p !== undefined),
      principal,
    )
  return {
    ...found,
    packs: found.packs.filter((p) => sees(p.item.packRoot, p.realRoot)),
    archived: found.archived.filter((p) => sees(p.item.packRoot, p.realRoot)),
    rejected: found.rejected.filter((r) => sees(r.packRoot)),
    shadowed: found.shadowed.filter((s) => sees(s.kept.location) && sees(s.shadowed.location)),
    diagnostics: found.diagnostics.filter((d) => d.path === undefined || !d.path.startsWith(sep) || sees(d.path)),
  }
}

/** Absolute prefix → what a remote caller sees instead, longest prefix first. */
export type PathMap = readonly (readonly [string, string])[]

/**
 * What a remote caller is shown instead of each absolute path of a discovery: a pack's root
 * is `packs/<name>`, a rejected pack's `packs/<folder>`, a location `<scope>-packs`.
 */
export function remotePathMap(found: DiscoveryResult): PathMap {
  const pairs = new Map<string, string>()
  const add = (path: string, shown: string) => {
    if (path.length > 1 && !pairs.has(path)) pairs.set(path, shown)
  }
  for (const pack of [...found.packs, ...found.archived]) {
    add(pack.item.packRoot, `packs/${pack.item.name}`)
    add(pack.realRoot, `packs/${pack.item.name}`)
  }
  for (const rejected of found.rejected) add(rejected.packRoot, `packs/${basename(rejected.packRoot)}`)
  const labels = new Set<string>()
  for (const location of found.locations) {
    const label = uniqueLabel(locationLabel(location), labels)
    add(location.path, label)
    add(realOrSame(location.path), label)
  }
  return [...pairs].sort((a, b) => b[0].length - a[0].length)
}

/**
 * What a remote caller sees for a scanned folder: its scope and the folder's own name, never the
 * server's path — `project/.agents/knowledge`, `home/.knowhub/knowledge`, `extra/team-packs`,
 * `builtin/packs` — so two folders of one scope stay apart.
 */
function locationLabel(location: DiscoveryResult['locations'][number]): string {
  const name = basename(location.path)
  if (location.scope === 'project' || location.scope === 'user') {
    return `${location.scope === 'user' ? 'home' : 'project'}/${basename(dirname(location.path))}/${name}`
  }
  return `${location.scope}/${name}`
}

/** `label`, or `label (2)`, `label (3)`… when taken. */
function uniqueLabel(label: string, taken: Set<string>): string {
  let candidate = label
  for (let n = 2; taken.has(candidate); n++) candidate = `${label} (${n})`
  taken.add(candidate)
  return candidate
}

/**
 * Every string in `value` (deeply: arrays and plain objects) with each absolute prefix of
 * `map` replaced. Returns new objects; `value` is not changed.
 * @example
 * relativise({ location: '/srv/packs/brief/KNOWLEDGE.md' }, [['/srv/packs/brief', 'packs/brief']]) // { location: 'packs/brief/KNOWLEDGE.md' }
 */
export function relativise<T>(value: T, map: PathMap): T {
  if (map.length === 0) return value
  const visit = (v: unknown): unknown => {
    if (typeof v === 'string') {
      let s = v
      for (const [from, to] of map) if (s.includes(from)) s = s.split(from).join(to)
      return s
    }
    if (Array.isArray(v)) return v.map(visit)
    if (v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, visit(x)]))
    }
    return v
  }
  return visit(value) as T
}
