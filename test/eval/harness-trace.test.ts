/**
 * The evaluation loader keeps the dialogue order (issue 17.4): a document with `meta.session`
 * becomes an entry in trace `<conv>:<session>`, in file order, with its id as `message_id`, so
 * that search's dialogue neighbours see the conversation; documents without a session get none.
 * A document's `meta.date` makes its entry valid from that day (issue 31).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { loadRetrievalSet } from '../../src/eval/dataset.js'
import { loadIntoKnowledge, type LoadedSet } from '../../src/eval/harness.js'
import { createKnowledgeService, DEFAULT_NEIGHBOUR_LIFT, type KnowledgeService } from '../../src/knowledge/service.js'
import { openStore, type Store } from '../../src/store/store.js'

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'

describe('loadIntoKnowledge: dialogue order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-trace-'))
  let store: Store
  let knowledge: KnowledgeService
  let loaded: LoadedSet

  beforeAll(async () => {
    const set = join(dir, 'set')
    mkdirSync(set)
    writeFileSync(
      join(set, 'corpus.jsonl'),
      jsonl([
        { id: 'c1:D1:1', text: 'Mel: How long have you been married?', meta: { conv: 'c1', session: 1 } },
        { id: 'c1:D1:2', text: 'Caro: Five years already!', meta: { conv: 'c1', session: 1 } },
        { id: 'c1:D2:1', text: 'Mel: We painted the kitchen blue.', meta: { conv: 'c1', session: 2, date: '1:56 pm on 8 May, 2023' } },
        { id: 'n1', text: 'Rotate the keys every ninety days.', meta: { conv: 'c1' } },
      ]),
    )
    writeFileSync(join(set, 'queries.jsonl'), jsonl([{ id: 'q1', text: 'how long married', meta: { conv: 'c1' } }]))
    writeFileSync(join(set, 'qrels.jsonl'), jsonl([{ query_id: 'q1', doc_id: 'c1:D1:2' }]))
    store = await openStore({ dataDir: join(dir, 'data') })
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), neighbours: DEFAULT_NEIGHBOUR_LIFT })
    loaded = await loadIntoKnowledge(knowledge, await loadRetrievalSet(set))
  })
  afterAll(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('puts conv:session in source.trace_id and the document id in source.message_id', async () => {
    const principal = loaded.principal('c1')
    const byDoc = new Map([...loaded.docOf].map(([id, doc]) => [doc, id]))
    const source = async (doc: string) => (await knowledge.get(byDoc.get(doc)!, principal)).source
    expect(await source('c1:D1:1')).toMatchObject({ trace_id: 'c1:1', message_id: 'c1:D1:1' })
    expect(await source('c1:D2:1')).toMatchObject({ trace_id: 'c1:2' })
    expect(await source('n1')).toMatchObject({ trace_id: '', message_id: 'n1' })
  })

  it('makes a document valid from its message date (issue 31), else from its import', async () => {
    const principal = loaded.principal('c1')
    const byDoc = new Map([...loaded.docOf].map(([id, doc]) => [doc, id]))
    const entry = async (doc: string) => knowledge.get(byDoc.get(doc)!, principal)
    expect((await entry('c1:D2:1')).valid_from).toBe('2023-05-08T00:00:00.000Z')
    const undated = await entry('c1:D1:1')
    expect(undated.valid_from).toBe(undated.created_at)
  })

  it('lets search find the reply after the matching turn, not the next session', async () => {
    const { results } = await knowledge.search({ q: 'how long married', top_k: 10, min_score: 0, mode: 'fulltext' }, loaded.principal('c1'))
    expect(results.map((r) => loaded.docOf.get(r.id))).toEqual(['c1:D1:1', 'c1:D1:2'])
  })
})
