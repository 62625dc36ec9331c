/**
 * Entry operations: save, get, versions, list, edit, archive, restore, delete. Each takes
 * the calling principal; visibility is enforced by the store's queries, ownership here.
 */
import type { z } from 'zod'
import { decodeCursor, encodeCursor } from '../../core/cursor.js'
import { KnowHubError } from '../../core/errors.js'
import { newKnowledgeId } from '../../core/ids.js'
import {
  EditKnowledgeInput,
  ignoredFields,
  ListInput,
  SaveKnowledgeInput,
  Source,
  type KnowledgeEntry,
  type KnowledgeInclude,
  type KnowledgeListPage,
  type KnowledgeVersion,
  type SavedKnowledge,
} from '../../core/knowledge.js'
import { checkVisibility } from '../../core/visibility.js'
import {
  assertWritableScopes,
  defaultOwnerOf,
  defaultWriteScopes,
  foreignOwnerError,
  requirePermission,
  visibleScopes,
  type Principal,
} from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeRecord, ValidityFilter } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'
import { entryDate } from '../search/dates.js'
import { embeddingText, searchDocument } from '../search/document.js'
import { pinResources } from './resource-pins.js'
import { entryNotFound, requireManaged, requireVisible, toEntries, toEntry } from './view.js'
import { mayNameOwner, writeAccess } from '../../auth/policy.js'

/** A page of entries, newest first, and the cursor of the next page (null on the last). */
/** A page of entries: the core's response shape. */
export type ListPage = KnowledgeListPage

function listCursor(record: KnowledgeRecord): string {
  return encodeCursor([record.created_at.toISOString(), record.id])
}

function listPosition(cursor: string): { created_at: Date; id: string } {
  return decodeCursor(cursor, ([at, id]) => {
    const created = new Date(String(at))
    return typeof id !== 'string' || Number.isNaN(created.getTime()) ? undefined : { created_at: created, id }
  })
}

/** The owner of a new entry: the named agent when the caller is that agent, else the caller's default owner. */
function defaultOwner(principal: Principal, agentId: string | undefined): string {
  if (agentId && principal.agent === agentId) return `agent:${agentId}`
  const owner = defaultOwnerOf(principal)
  if (!owner) throw new KnowHubError('forbidden', 'The caller has no user or agent id to own the entry')
  return owner
}

/**
 * A new entry's record, without its id, from the body of a save (already parsed): scopes
 * default to the caller's own user (or first) scope, owner to the caller; both checked
 * against what the caller may write. Shared by `saveEntry` (which pins the resources too) and
 * the import of save-shaped lines (whose resources, like an exported line's, follow the owner).
 * @example
 * const base = newEntryRecord(SaveKnowledgeInput.parse(body), principal, new Date())
 */
export function newEntryRecord(input: z.output<typeof SaveKnowledgeInput>, principal: Principal, now: Date): Omit<KnowledgeRecord, 'id'> {
  const scopes = input.scopes ?? defaultWriteScopes(principal)
  if (scopes.length === 0) throw new KnowHubError('forbidden', 'The caller belongs to no scope it could write to')
  assertWritableScopes(principal, scopes)
  const owner = input.owner ?? defaultOwner(principal, input.source.agent_id)
  if (!mayNameOwner(principal, owner)) throw foreignOwnerError(principal, owner, 'entries')
  const source = Source.parse({
    ...input.source,
    timestamp: input.source.timestamp ?? now.toISOString(),
    message_id: input.source.message_id ?? input.message_id,
  })
  return {
    message_id: input.message_id,
    types: input.types,
    task: input.task,
    tags: input.tags,
    scopes: [...new Set(scopes)],
    owner,
    content: input.content,
    resource_ids: [...new Set(input.resource_ids)],
    source,
    score: input.score,
    helpful: 0,
    harmful: 0,
    confidence: input.confidence,
    status: 'active' as const,
    merged_into: null,
    version: 1,
    created_at: now,
    updated_at: now,
    // When the fact became true: as given, else the source message's time (when it is a date), else now.
    valid_from: input.valid_from ? new Date(input.valid_from) : entryDate({ source, created_at: now }),
    valid_to: null,
    superseded_by: null,
    supersedes: null,
    expires_at: input.expires_at ? new Date(input.expires_at) : null,
  }
}

/**
 * Saves a new entry. Scopes default to the caller's own user (or first) scope; owner to the caller.
 * The seeds' records load as written (issue 41): `visibility` is checked against the scopes, and a
 * client-given `id` is an idempotent create (see {@link saveWithId}); `ignored` names what the
 * record gave that a save does not take from a client.
 * @example
 * const entry = await saveEntry(ctx, { task: 'Log in to site A', content: 'Use the test account', types: ['tool'] }, principal)
 */
export async function saveEntry(ctx: KnowledgeContext, raw: unknown, principal: Principal): Promise<SavedKnowledge> {
  requirePermission(principal, 'write')
  const input = parseWith(SaveKnowledgeInput, raw, 'knowledge entry')
  ctx.checkContentSize(input.content)
  ctx.requireVectors()
  const now = ctx.clock.now()
  const fields = newEntryRecord(input, principal, now)
  checkVisibility(input.visibility, fields.scopes, fields.owner)
  // Each resource id is pinned to the owner of the resource it resolves to for the writer (#15.8).
  const base = { ...fields, resource_owners: await pinResources(ctx.store, fields.resource_ids, principal, fields.owner) }
  const doc = searchDocument(base.task, base.content, base.tags)
  const embedding = await ctx.embedOne(embeddingText(base.task, base.content), 'document')
  const ignored = ignoredFields(raw)
  const notes = ignored.length > 0 ? { ignored } : {}
  if (input.id !== undefined) return { ...(await saveWithId(ctx, { id: input.id, ...base }, doc, embedding, principal)), ...notes }
  for (let attempt = 0; attempt < 8; attempt++) {
    const record: KnowledgeRecord = { id: newKnowledgeId(now), ...base }
    if (await ctx.store.knowledge.insert(record, doc, embedding)) {
      ctx.logger.info('knowledge.saved', { id: record.id, types: record.types, scopes: record.scopes })
      await ctx.noteWrites(1)
      return { ...(await toEntry(ctx.store, record, visibleScopes(principal))), ...notes }
    }
  }
  throw new KnowHubError('conflict', 'Could not allocate a unique knowledge id; try again')
}

/**
 * A save under a client-given id: inserted when the id is free; when an entry the caller can see
 * has it with the same task and content, that entry (`existed: true`, nothing changed); else
 * `conflict`, in the same words whether the entry holding the id is visible or not.
 */
async function saveWithId(
  ctx: KnowledgeContext,
  record: KnowledgeRecord,
  doc: ReturnType<typeof searchDocument>,
  embedding: Float32Array | undefined,
  principal: Principal,
): Promise<SavedKnowledge> {
  const visible = visibleScopes(principal)
  if (await ctx.store.knowledge.insert(record, doc, embedding)) {
    ctx.logger.info('knowledge.saved', { id: record.id, types: record.types, scopes: record.scopes })
    await ctx.noteWrites(1)
    return toEntry(ctx.store, record, visible)
  }
  const stored = await ctx.store.knowledge.get(record.id, visible)
  if (stored && stored.task === record.task && stored.content === record.content) return { ...(await toEntry(ctx.store, stored, visible)), existed: true }
  throw new KnowHubError('conflict', `Entry id ${record.id} is taken by an entry with another task or content: leave id out, or choose another`, {
    id: record.id,
  })
}

/**
 * One entry with its feedback histories, if the caller can see it.
 * @example
 * const entry = await getEntry(ctx, id, principal)
 */
export async function getEntry(ctx: KnowledgeContext, id: string, principal: Principal): Promise<KnowledgeEntry> {
  requirePermission(principal, 'read')
  return toEntry(ctx.store, await requireVisible(ctx.store, id, principal), visibleScopes(principal))
}

/**
 * Previous versions of an entry, oldest first.
 * @example
 * const versions = await entryVersions(ctx, id, principal)
 */
export async function entryVersions(ctx: KnowledgeContext, id: string, principal: Principal): Promise<KnowledgeVersion[]> {
  requirePermission(principal, 'read')
  await requireVisible(ctx.store, id, principal)
  return ctx.store.knowledge.versions(id, visibleScopes(principal))
}

/**
 * The validity filter of a list or search `include` at `now` (issue 31): current entries, plus
 * the superseded and/or expired ones asked for.
 * @example
 * includeValidity(['superseded'], now) // { now, superseded: true }
 */
export function includeValidity(include: readonly KnowledgeInclude[] | undefined, now: Date): ValidityFilter {
  return { now, ...(include?.includes('superseded') ? { superseded: true } : {}), ...(include?.includes('expired') ? { expired: true } : {}) }
}

/**
 * Visible entries, newest first, with cursor pagination (current ones unless `include` asks for more).
 * @example
 * const { items, next_cursor } = await listEntries(ctx, { limit: 10, types: ['tool'] }, principal)
 */
export async function listEntries(ctx: KnowledgeContext, raw: unknown, principal: Principal): Promise<ListPage> {
  requirePermission(principal, 'read')
  const input = parseWith(ListInput, raw ?? {}, 'list options')
  const after = input.cursor ? listPosition(input.cursor) : undefined
  const records = await ctx.store.knowledge.list(
    {
      visible: visibleScopes(principal),
      types: input.types,
      scopes: input.scopes,
      visibility: input.visibility,
      tags: input.tags,
      status: input.status,
      validity: includeValidity(input.include, ctx.clock.now()),
    },
    input.limit + 1,
    after,
  )
  const page = records.slice(0, input.limit)
  const last = page[page.length - 1]
  const items = await toEntries(ctx.store, page, visibleScopes(principal))
  return { items, count: items.length, next_cursor: records.length > input.limit && last ? listCursor(last) : null }
}

/**
 * Edits task, content, types, tags, scopes or resources (owner or admin). The previous version is kept.
 * @example
 * const edited = await editEntry(ctx, id, { content: 'Use corepack enable first' }, principal)
 */
export async function editEntry(ctx: KnowledgeContext, id: string, raw: unknown, principal: Principal): Promise<KnowledgeEntry> {
  requirePermission(principal, 'write')
  const input = parseWith(EditKnowledgeInput, raw, 'edit')
  const record = await requireManaged(ctx.store, id, principal)
  if (input.content !== undefined) ctx.checkContentSize(input.content)
  if (input.scopes) assertWritableScopes(principal, input.scopes)
  ctx.requireVectors()
  const change = {
    task: input.task ?? record.task,
    content: input.content ?? record.content,
    types: input.types ?? record.types,
    tags: input.tags ?? record.tags,
    scopes: input.scopes ? [...new Set(input.scopes)] : record.scopes,
    resource_ids: input.resource_ids ?? record.resource_ids,
    ...(input.resource_ids ? { resource_owners: await pinResources(ctx.store, input.resource_ids, principal, record.owner, record.resource_owners) } : {}),
  }
  const textChanged = change.task !== record.task || change.content !== record.content
  const embedding = textChanged ? await ctx.embedOne(embeddingText(change.task, change.content), 'document') : undefined
  const updated = await ctx.store.knowledge.update(
    id,
    writeAccess(principal),
    record.version,
    change,
    searchDocument(change.task, change.content, change.tags),
    embedding,
    input.reason ?? 'edit',
    ctx.clock.now(),
  )
  if (!updated) throw new KnowHubError('conflict', `Entry ${id} changed while it was being edited; read it again and retry`, { id })
  ctx.logger.info('knowledge.edited', { id, version: updated.version })
  return toEntry(ctx.store, updated, visibleScopes(principal))
}

/**
 * Sets an entry's status (owner or admin): `archived` hides it from search and list and keeps it in
 * full; `active` restores an archived or merged entry.
 * @example
 * await setEntryStatus(ctx, id, 'archived', principal)
 */
export async function setEntryStatus(ctx: KnowledgeContext, id: string, status: 'active' | 'archived', principal: Principal): Promise<KnowledgeEntry> {
  requirePermission(principal, 'write')
  await requireManaged(ctx.store, id, principal)
  const record = await ctx.store.knowledge.setStatus(id, writeAccess(principal), status, null, ctx.clock.now())
  if (!record) throw entryNotFound(id)
  return toEntry(ctx.store, record, visibleScopes(principal))
}

/**
 * Deletes an entry and its history for good (owner or admin).
 * @example
 * await deleteEntry(ctx, id, principal)
 */
export async function deleteEntry(ctx: KnowledgeContext, id: string, principal: Principal): Promise<void> {
  requirePermission(principal, 'write')
  await requireManaged(ctx.store, id, principal)
  if (!(await ctx.store.knowledge.delete(id, writeAccess(principal)))) throw entryNotFound(id)
  ctx.logger.info('knowledge.deleted', { id })
}
