/**
 * The knowledge folder's export: every entry the caller sees (any status, with histories and
 * versions, as the JSONL export has them), placed by the layout's rule (layout.ts), as files.
 */
import type { KnowledgeExportLine } from '../../core/knowledge.js'
import type { FolderFile } from '../../core/knowledge-folder.js'
import { requirePermission, visibleScopes, type Principal } from '../../core/principal.js'
import { ANY_VALIDITY } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'
import { toEntries } from '../entries/view.js'
import { FOLDER_README, fileText, placeOf, readmeText } from './layout.js'

/**
 * Every entry the caller sees, any status (superseded and expired too), with its feedback histories and earlier versions.
 * @example
 * const entries = await visibleEntries(ctx, principal)
 */
export async function visibleEntries(ctx: KnowledgeContext, principal: Principal, batchSize = 1000): Promise<KnowledgeExportLine[]> {
  requirePermission(principal, 'read')
  const visible = visibleScopes(principal)
  const out: KnowledgeExportLine[] = []
  let after: { created_at: Date; id: string } | undefined
  for (;;) {
    const records = await ctx.store.knowledge.list({ visible, status: ['active', 'merged', 'archived'], validity: ANY_VALIDITY }, batchSize, after)
    if (records.length === 0) return out
    const versions = await ctx.store.knowledge.versionsOf(
      records.map((r) => r.id),
      visible,
    )
    for (const entry of await toEntries(ctx.store, records, visible)) out.push({ ...entry, versions: versions.get(entry.id) ?? [] })
    const last = records[records.length - 1]!
    after = { created_at: last.created_at, id: last.id }
  }
}

/**
 * The folder's files for these entries: each knowledge file (entries sorted by id, fixed key
 * order) and the README, sorted by path.
 * @example
 * const files = folderFiles(entries)
 */
export function folderFiles(entries: readonly KnowledgeExportLine[]): FolderFile[] {
  const byFile = new Map<string, KnowledgeExportLine[]>()
  for (const entry of entries) {
    const path = placeOf(entry)
    const list = byFile.get(path)
    if (list) list.push(entry)
    else byFile.set(path, [entry])
  }
  const files: FolderFile[] = [{ path: FOLDER_README, text: readmeText() }]
  for (const [path, list] of byFile) files.push({ path, text: fileText(list) })
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * The caller's knowledge folder (seed 002's layout), as files to write.
 * @example
 * for (const file of await exportFolder(ctx, principal)) await writeFile(join(dir, file.path), file.text)
 */
export async function exportFolder(ctx: KnowledgeContext, principal: Principal): Promise<FolderFile[]> {
  const files = folderFiles(await visibleEntries(ctx, principal))
  ctx.logger.info('knowledge.folder.exported', { files: files.length })
  return files
}
