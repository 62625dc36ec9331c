/**
 * Keeping the stored search data in step with the code and the configuration: re-embedding
 * every entry after an embedder change, and rebuilding full-text documents written in an
 * older format.
 */
import type { KnowledgeContext } from '../context.js'
import { embeddingText, SEARCH_DOC_VERSION, searchDocument } from './document.js'

/**
 * Rebuilds stored full-text documents written in an older format (once, at start-up).
 * @example
 * await refreshSearchDocs(ctx)
 */
export async function refreshSearchDocs(ctx: KnowledgeContext): Promise<void> {
  const { store } = ctx
  const version = await store.knowledge.searchDocVersion()
  if (version === SEARCH_DOC_VERSION) return
  let done = 0
  let after = ''
  for (;;) {
    const rows = await store.knowledge.scan(after, 500)
    if (rows.length === 0) break
    await store.knowledge.setSearchDocs(rows.map((r) => ({ id: r.id, doc: searchDocument(r.task, r.content, r.tags) })))
    done += rows.length
    after = rows[rows.length - 1]!.id
  }
  await store.knowledge.setSearchDocVersion(SEARCH_DOC_VERSION)
  if (done > 0) ctx.logger.info('knowledge.fulltext.rebuilt', { count: done, from: version ?? 1, to: SEARCH_DOC_VERSION })
}

/**
 * Re-embeds every entry with the configured embedder (after changing it), in batches.
 * @returns the number of entries re-embedded.
 * @example
 * const count = await reindexEntries(ctx, { onProgress: (done, total) => bar.update(done, { total }) })
 */
export async function reindexEntries(
  ctx: KnowledgeContext,
  options: { onProgress?: (done: number, total: number) => void; batchSize?: number } = {},
): Promise<number> {
  const { store, embedder } = ctx
  await ctx.prepareVectors(true)
  const total = await store.knowledge.count()
  const batchSize = options.batchSize ?? 64
  let done = 0
  let after = ''
  options.onProgress?.(0, total)
  for (;;) {
    const rows = await store.knowledge.scan(after, batchSize)
    if (rows.length === 0) break
    const vectors = await embedder.embed(
      rows.map((r) => embeddingText(r.task, r.content)),
      { kind: 'document' },
    )
    await store.knowledge.setEmbeddings(rows.map((r, i) => ({ id: r.id, embedding: vectors[i]! })))
    done += rows.length
    after = rows[rows.length - 1]!.id
    options.onProgress?.(done, total)
  }
  await store.knowledge.analyze()
  ctx.logger.info('knowledge.reindexed', { count: done, model: embedder.model })
  return done
}
