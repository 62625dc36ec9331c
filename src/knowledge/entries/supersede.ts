/**
 * Supersession by hand (issue 31; docs/knowledge.md, "Validity in time"): an entry that stopped
 * being true is closed (`valid_to`, `superseded_by`) and the entry that replaces it is linked
 * (`supersedes`), in one store transaction. The replacement is an existing entry (its id) or a
 * new one (a save's body), then saved in the same transaction. Who may: whoever may edit both
 * entries (the owner, or an admin within reach; the rule of edit). An entry the caller cannot
 * see answers like an unknown id.
 */
import { KnowHubError } from '../../core/errors.js'
import { newKnowledgeId } from '../../core/ids.js'
import { SupersedeInput, type KnowledgeEntry, type SupersedeResult } from '../../core/knowledge.js'
import { requirePermission, type Principal } from '../../core/principal.js'
import { writeAccess } from '../../auth/policy.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeRecord, SupersedeRefusal } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'
import { embeddingText, searchDocument } from '../search/document.js'
import { newEntryRecord } from './entries.js'
import { pinResources } from './resource-pins.js'
import { entryNotFound, requireManaged, toEntries } from './view.js'

export type { SupersedeResult }

/** A conflict with the entry's id in its details. */
const conflict = (message: string, id: string, more: Record<string, unknown> = {}) => new KnowHubError('conflict', message, { id, ...more })

/** Why an entry cannot take part in a supersession, or undefined when it can. */
function stateProblem(record: KnowledgeRecord, role: 'old' | 'new', other: string): KnowHubError | undefined {
  if (record.status !== 'active') {
    return conflict(`Entry ${record.id} is ${record.status}: only active entries can be superseded or supersede (restore it first)`, record.id, {
      status: record.status,
    })
  }
  if (record.valid_to !== null) {
    const by = record.superseded_by ? ` by ${record.superseded_by}` : ''
    const when = record.valid_to.toISOString()
    if (role === 'old') {
      return conflict(`Entry ${record.id} was already superseded${by} (valid until ${when}); supersede the current entry of its chain instead`, record.id, {
        superseded_by: record.superseded_by,
        valid_to: when,
      })
    }
    const cycle = record.superseded_by === other ? `: ${other} superseded it, and a supersession cannot go back (a cycle)` : ''
    return conflict(`Entry ${record.id} was itself superseded${by} (valid until ${when}) and cannot supersede another${cycle}`, record.id, {
      superseded_by: record.superseded_by,
      valid_to: when,
    })
  }
  if (role === 'new' && record.supersedes !== null) {
    return conflict(`Entry ${record.id} already supersedes ${record.supersedes}; one entry supersedes one other (save a new entry for ${other})`, record.id, {
      supersedes: record.supersedes,
    })
  }
  return undefined
}

/** A refusal of the store (something changed between the checks and the write) as an error. */
function refusalError(refused: SupersedeRefusal, oldId: string, newId: string): KnowHubError {
  switch (refused) {
    case 'old_missing':
      return entryNotFound(oldId)
    case 'new_missing':
      return entryNotFound(newId)
    case 'id_taken':
      return conflict(`Could not allocate a unique knowledge id for the new entry; try again`, newId)
    default:
      return conflict(
        `Entry ${refused === 'old_changed' ? oldId : newId} changed while it was being superseded; read it again and retry`,
        refused === 'old_changed' ? oldId : newId,
      )
  }
}

/**
 * When the old entry stopped being valid, unless given: when the new one started, if later than
 * the old one's start, else now; never before the old one's start.
 */
function closingTime(old: KnowledgeRecord, newFrom: Date, given: string | undefined, now: Date): Date {
  if (given !== undefined) {
    const at = new Date(given)
    if (at.getTime() <= old.valid_from.getTime()) {
      throw new KnowHubError('validation_error', `Invalid supersession: valid_to: must be after the old entry's valid_from (${old.valid_from.toISOString()})`, {
        issues: [{ path: 'valid_to', message: `must be after ${old.valid_from.toISOString()}` }],
      })
    }
    return at
  }
  const at = newFrom.getTime() > old.valid_from.getTime() ? newFrom : now
  return at.getTime() > old.valid_from.getTime() ? at : old.valid_from
}

/**
 * Supersedes entry `oldId` by another (`SupersedeInput`: `by`, an entry id or a new entry's body;
 * optional `valid_to`), in one transaction. Returns both entries as they are now.
 * @example
 * const { superseded, current } = await supersedeEntry(ctx, oldId, { by: newId }, principal)
 * const made = await supersedeEntry(ctx, oldId, { by: { task: 'CI', content: 'We use GitHub Actions', types: ['tool'] } }, principal)
 */
export async function supersedeEntry(ctx: KnowledgeContext, oldId: string, raw: unknown, principal: Principal): Promise<SupersedeResult> {
  requirePermission(principal, 'write')
  const input = parseWith(SupersedeInput, raw, 'supersession')
  if (typeof input.by === 'string' && input.by === oldId) {
    throw new KnowHubError('validation_error', `Invalid supersession: by: an entry cannot supersede itself (${oldId})`, {
      issues: [{ path: 'by', message: 'an entry cannot supersede itself' }],
    })
  }
  const old = await requireManaged(ctx.store, oldId, principal)
  const oldProblem = stateProblem(old, 'old', typeof input.by === 'string' ? input.by : 'the new entry')
  if (oldProblem) throw oldProblem
  const now = ctx.clock.now()
  const access = writeAccess(principal)
  let insert: { record: KnowledgeRecord; doc: ReturnType<typeof searchDocument>; embedding: Float32Array | undefined } | undefined
  let fresh: KnowledgeRecord
  if (typeof input.by === 'string') {
    fresh = await requireManaged(ctx.store, input.by, principal)
    const problem = stateProblem(fresh, 'new', oldId)
    if (problem) throw problem
  } else {
    ctx.checkContentSize(input.by.content)
    ctx.requireVectors()
    const fields = newEntryRecord(input.by, principal, now)
    const base = { ...fields, resource_owners: await pinResources(ctx.store, fields.resource_ids, principal, fields.owner) }
    fresh = { id: newKnowledgeId(now), ...base }
    insert = {
      record: fresh,
      doc: searchDocument(base.task, base.content, base.tags),
      embedding: await ctx.embedOne(embeddingText(base.task, base.content), 'document'),
    }
  }
  const validTo = closingTime(old, fresh.valid_from, input.valid_to, now)
  let done = await ctx.store.knowledge.supersede({ oldId, newId: fresh.id, access, validTo, at: now, ...(insert ? { insert } : {}) })
  // A new entry's drawn id taken meanwhile: draw another.
  for (let attempt = 0; insert && 'refused' in done && done.refused === 'id_taken' && attempt < 8; attempt++) {
    insert.record = { ...insert.record, id: newKnowledgeId(now) }
    done = await ctx.store.knowledge.supersede({ oldId, newId: insert.record.id, access, validTo, at: now, insert })
  }
  if ('refused' in done) throw refusalError(done.refused, oldId, insert?.record.id ?? fresh.id)
  ctx.logger.info('knowledge.superseded', { id: oldId, by: done.current.id, created: insert !== undefined })
  if (insert) await ctx.noteWrites(1)
  const [superseded, current] = (await toEntries(ctx.store, [done.old, done.current], access.visible)) as [KnowledgeEntry, KnowledgeEntry]
  return { superseded, current }
}
