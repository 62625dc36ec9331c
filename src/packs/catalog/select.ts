/**
 * Choosing packs: by name (one lookup with one `not_found` error for every
 * caller: CLI, agent tools, MCP, sessions), or, when no name is given, the
 * packs whose catalog entry (name, description, type) matches the task.
 */
import { join, resolve } from 'node:path'
import { KnowHubError } from '../../core/errors.js'
import { findPack, type DiscoveryResult } from '../discover/discover.js'
import { documentTerms, queryTerms } from '../pack-index/lexical.js'
import type { LoadedPack } from '../schema.js'

/**
 * Packs to choose from: the available ones, plus (when known) the archived
 * ones, which are found by name too, and the rejected ones, which explain why
 * a name is missing.
 */
export type PackSet = Pick<DiscoveryResult, 'packs'> & Partial<Pick<DiscoveryResult, 'archived' | 'rejected'>>

/** Default number of packs matched by task. */
const MAX_MATCHED = 5

/**
 * Packs whose name, description or type share terms with the task, best
 * first (at most `max`, default 5). Returns none when nothing matches.
 * @example
 * const packs = matchPacks('What does the Team plan cost?', found.packs)
 */
export function matchPacks(task: string, packs: readonly LoadedPack[], options: { max?: number } = {}): LoadedPack[] {
  const terms = queryTerms(task)
  const scored: { pack: LoadedPack; score: number; at: number }[] = []
  packs.forEach((pack, at) => {
    const item = pack.item
    const have = new Set(documentTerms(`${item.name.replace(/-/gu, ' ')} ${item.description} ${item.type.replace(/[-:]/gu, ' ')}`))
    const score = terms.reduce((sum, t) => sum + (have.has(t.term) ? t.weight : 0), 0)
    if (score > 0) scored.push({ pack, score, at })
  })
  scored.sort((a, b) => b.score - a.score || a.at - b.at)
  return scored.slice(0, options.max ?? MAX_MATCHED).map((s) => s.pack)
}

/** True when a pack reference is a path (`./packs/acme`, `/abs/acme/KNOWLEDGE.md`) rather than a name. */
export function isPathReference(ref: string): boolean {
  return /[/\\]/u.test(ref) || ref.startsWith('.')
}

/** The pack whose folder or KNOWLEDGE.md is at `ref` (resolved against the working folder). */
function packAtPath(set: PackSet, ref: string): LoadedPack | undefined {
  const target = resolve(ref)
  const all = [...set.packs, ...(set.archived ?? [])]
  return all.find((p) => [p.item.packRoot, p.item.location, p.realRoot, join(p.realRoot, 'KNOWLEDGE.md')].some((path) => resolve(path) === target))
}

/**
 * The pack of this name or at this path (runtime standard: explicit selection
 * by name or path; an available one first, else an archived one when the set
 * has them). Throws `not_found`, saying why when the pack was rejected at load.
 * @example
 * const pack = packByName(found, 'acme-product-brief')
 * const same = packByName(found, './.agents/knowledge/acme-product-brief')
 */
export function packByName(set: PackSet, name: string): LoadedPack {
  const pack = isPathReference(name) ? packAtPath(set, name) : findPack({ packs: set.packs, archived: set.archived ?? [] }, name, { includeArchived: true })
  if (pack) return pack
  const rejected = set.rejected?.find((r) => r.name === name)
  const why = rejected ? ` (it did not load: ${rejected.issues.map((i) => i.message).join(' ')})` : ''
  throw new KnowHubError('not_found', `No knowledge pack ${isPathReference(name) ? 'at' : 'named'} "${name}"${why}`, { pack: name })
}

/** What to select: pack names, or a task to match when no name is given. */
export interface PackSelection {
  /** Pack names; absent or empty: match the task. */
  names?: readonly string[] | undefined
  /** The task, matched against the catalog when no name is given. */
  task?: string
  /** Most packs matched by task (default 5). */
  max?: number
}

/**
 * Selects packs: each named one ({@link packByName}: unknown names throw
 * `not_found`), or, without names, the packs whose catalog entry matches the
 * task ({@link matchPacks}; none when nothing matches).
 * @example
 * selectPacks(found, { names: ['acme-product-brief'] })
 * selectPacks(found, { task: 'What does the Team plan cost?' })
 */
export function selectPacks(set: PackSet, selection: PackSelection): LoadedPack[] {
  if (selection.names && selection.names.length > 0) return selection.names.map((name) => packByName(set, name))
  return matchPacks(selection.task ?? '', set.packs, selection.max === undefined ? {} : { max: selection.max })
}
