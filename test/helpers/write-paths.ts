/**
 * One script of writes through the knowledge service — saves, edits, feedback, archive,
 * delete, supersede, export/import, merge, unmerge, optionally reindex — with a check after each stage.
 * The in-memory indexes' equivalence tests (text-index, vector-index) drive it and check that
 * the index still answers exactly as SQL does.
 */
import { expect } from 'vitest'
import type { Principal } from '../../src/core/principal.js'
import type { Embedder } from '../../src/embed/embedder.js'
import type { KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'

export interface WritePathOptions {
  /** Appended to every fourth entry's content (e.g. Chinese text for the full-text index). */
  contentSuffix?: string
  /** Re-embed every entry at the end (`reindex`), checked as a last stage. */
  reindex?: boolean
}

/**
 * Runs the script as `author` (read, write) and `admin` (slim), calling `check(stage)` after
 * saves; edits, feedback, archive, delete; import; merge; unmerge; and reindex when asked.
 * @example
 * await driveWritePaths({ store, embedder, knowledge, author: alice, admin }, expectSameAsSql)
 */
export async function driveWritePaths(
  hub: { store: Store; embedder: Embedder; knowledge: KnowledgeService; author: Principal; admin: Principal },
  check: (stage: string) => Promise<void>,
  options: WritePathOptions = {},
): Promise<void> {
  const { store, embedder, knowledge, author, admin } = hub
  const words = ['selenium', 'login', 'captcha', 'proxy', 'rotation', 'agent', 'notes', 'deploy', 'docker', 'pnpm']
  const saved: string[] = []
  for (let i = 0; i < 40; i++) {
    const content = `${words.filter((_, w) => (i + w) % 3 === 0).join(' ')} ${'filler '.repeat(i % 5)}${i % 4 === 0 ? (options.contentSuffix ?? '') : ''}`
    const entry = await knowledge.save(
      {
        task: `task ${i} ${words[i % words.length]}`,
        content,
        types: [i % 2 ? 'tool' : 'strategy'],
        scopes: [['user:alice', 'project:p', 'org:acme'][i % 3]!],
        score: 1 + (i % 5),
        // Four conversations, and entries outside any (dialogue neighbours).
        ...(i % 5 === 4 ? {} : { source: { trace_id: `conversation-${i % 4}` } }),
      },
      author,
    )
    saved.push(entry.id)
  }
  await check('saves')
  await knowledge.edit(saved[0]!, { content: 'now about pnpm and docker only' }, author)
  await knowledge.edit(saved[1]!, { scopes: ['user:alice'], types: ['plan'] }, author)
  await knowledge.feedback(saved[2]!, { add_harmful_case: { task: 't', outcome: 'bad' } }, author)
  await knowledge.feedback(saved[2]!, { add_harmful_case: { task: 't', outcome: 'bad' } }, author)
  await knowledge.feedback(saved[3]!, { update_score: 1 }, author)
  await knowledge.archive(saved[4]!, author)
  await knowledge.delete(saved[5]!, author)
  await check('edits, feedback, archive, delete')
  // Supersessions (issue 31): by an existing entry, and by a new one saved with it.
  await knowledge.supersede(saved[6]!, { by: saved[7]! }, author)
  await knowledge.supersede(saved[8]!, { by: { task: 'task 8 superseded', content: 'selenium login now through pnpm', types: ['tool'] } }, author)
  await check('supersede')
  const exported: string[] = []
  for await (const line of knowledge.exportJsonl(author)) exported.push(line)
  // Copies under new ids and tasks: ten more entries, some near-duplicates for the merge.
  const copies = exported.slice(0, 10).map((line) => {
    const entry = JSON.parse(line) as { id: string; task: string }
    return JSON.stringify({ ...entry, id: `${entry.id}-copy`, task: `copy ${entry.task}` })
  })
  expect((await knowledge.importJsonl(copies, author)).imported).toBe(10)
  await check('import')
  const { slimKnowledge, unmergeKnowledge } = await import('../../src/knowledge/slim/slim.js')
  const slim = await slimKnowledge({ store, embedder }, { threshold: 0.9 }, admin)
  expect(slim.merged).toBeGreaterThan(0)
  await check('merge')
  await unmergeKnowledge({ store, embedder }, slim.groups.find((g) => g.kept_id)!.kept_id!, admin)
  await check('unmerge')
  if (options.reindex) {
    expect(await knowledge.reindex()).toBeGreaterThan(40)
    await check('reindex')
  }
}
