/**
 * Throughput of the offline hashed embedder (one core; the work is synchronous),
 * and, when the LoCoMo dev corpus is beside the repository
 * (`../shared/corpus/locomo`, or KNOWHUB_LOCOMO_DIR), its dense-only retrieval
 * quality there. Run alone with `npx tsx bench/embed.ts`: prints a table and
 * writes bench/results/embed.json.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createHashedEmbedder } from '../src/embed/hashed.js'
import { seededRandom } from '../src/core/random.js'

export interface BenchResult {
  name: string
  value: number
  unit: string
  target?: string
  note?: string
}

const ENGLISH = (
  'i you we the a to and of in on for with about at yesterday today tomorrow last week weekend month year ' +
  'went go going visited visit met meeting talked talk told said love loved like enjoy enjoyed started start ' +
  'finished working work job career school class painting painted pottery camping camp hiking hike beach lake ' +
  'mountains park garden dog dogs cat kids children family friends friend mom dad sister brother partner ' +
  'support group community conference project deadline report book books reading read novel music concert guitar ' +
  'piano song songs movie movies cooking cooked recipe dinner lunch breakfast coffee tea trip travel travelled ' +
  'city country adoption agency counseling therapy mental health running race marathon gym yoga photos photo ' +
  'birthday party wedding anniversary gift new old big small beautiful amazing hard happy excited proud nervous ' +
  'because really just so much very always never sometimes again together'
).split(' ')

const CHINESE = (
  '我 你 我们 昨天 今天 明天 上周 周末 去 了 在 和 一起 喜欢 非常 公园 跑步 朋友 家人 孩子 工作 项目 会议 ' +
  '报告 学习 学校 老师 电影 音乐 吉他 钢琴 咖啡 晚饭 午饭 早饭 旅行 城市 北京 上海 爬山 海边 画画 读书 小说 ' +
  '开始 完成 准备 计划 决定 觉得 开心 紧张 骄傲 累 新的 漂亮 生日 聚会 婚礼 礼物 健身 瑜伽 照片 支持 小组 社区 ' +
  '用户 偏好 数据库 代码 部署 服务器 配置 问题 解决 方案 因为 所以 但是 已经 还是 每天 有时候'
).split(' ')

function englishText(next: () => number, words: number): string {
  const parts: string[] = []
  for (let i = 0; i < words; i++) {
    // One word in eight is a rare token (a name, a typo, a number), as in real chat.
    parts.push(next() < 0.125 ? `w${Math.floor(next() * 50_000)}` : ENGLISH[Math.floor(next() * ENGLISH.length)]!)
  }
  return `${parts.join(' ')}.`
}

function chineseText(next: () => number, words: number): string {
  let text = ''
  for (let i = 0; i < words; i++) text += CHINESE[Math.floor(next() * CHINESE.length)]!
  return `${text}。`
}

/** Embeds `texts` repeatedly for at least `minMs` and returns texts per second. */
async function throughput(texts: string[], minMs = 1_000): Promise<number> {
  const embedder = createHashedEmbedder({ dimension: 512 })
  await embedder.embed(texts.slice(0, 200), { kind: 'document' }) // warm up the JIT and the stem cache
  let done = 0
  const started = performance.now()
  let elapsed = 0
  while (elapsed < minMs) {
    await embedder.embed(texts, { kind: 'document' })
    done += texts.length
    elapsed = performance.now() - started
  }
  return (done / elapsed) * 1000
}

interface LocomoRecord {
  id: string
  text: string
  meta: { conv: string }
}

async function readJsonl<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8')
  return text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T)
}

/**
 * Dense-only retrieval with the hashed embedder on one LoCoMo view: each query
 * searches its own conversation by cosine; recall@10 and nDCG@10 averaged over
 * queries. Full-text search is not involved.
 */
async function locomoRetrieval(folder: string, dimension: number): Promise<{ recall: number; ndcg: number; queries: number }> {
  const docs = await readJsonl<LocomoRecord>(`${folder}/corpus.jsonl`)
  const queries = await readJsonl<LocomoRecord>(`${folder}/queries.jsonl`)
  const relevant = new Map<string, Set<string>>()
  for (const { query_id: query, doc_id: doc } of await readJsonl<{ query_id: string; doc_id: string }>(`${folder}/qrels.jsonl`)) {
    const set = relevant.get(query) ?? new Set<string>()
    set.add(doc)
    relevant.set(query, set)
  }
  const embedder = createHashedEmbedder({ dimension })
  const docVectors = await embedder.embed(
    docs.map((doc) => doc.text),
    { kind: 'document' },
  )
  const queryVectors = await embedder.embed(
    queries.map((query) => query.text),
    { kind: 'query' },
  )
  let recall = 0
  let ndcg = 0
  let count = 0
  queries.forEach((query, q) => {
    const wanted = relevant.get(query.id)
    if (!wanted) return
    const scored: Array<[number, string]> = []
    docs.forEach((doc, d) => {
      if (doc.meta.conv !== query.meta.conv) return
      const a = queryVectors[q]!
      const b = docVectors[d]!
      let dot = 0
      for (let i = 0; i < dimension; i++) dot += a[i]! * b[i]!
      scored.push([dot, doc.id])
    })
    const top = scored
      .sort((x, y) => y[0] - x[0])
      .slice(0, 10)
      .map(([, id]) => id)
    recall += top.filter((id) => wanted.has(id)).length / wanted.size
    let dcg = 0
    top.forEach((id, rank) => {
      if (wanted.has(id)) dcg += 1 / Math.log2(rank + 2)
    })
    let ideal = 0
    for (let rank = 0; rank < Math.min(10, wanted.size); rank++) ideal += 1 / Math.log2(rank + 2)
    ndcg += dcg / ideal
    count++
  })
  return { recall: recall / count, ndcg: ndcg / count, queries: count }
}

function locomoFolder(): string | undefined {
  const folder = process.env.KNOWHUB_LOCOMO_DIR ?? fileURLToPath(new URL('../../shared/corpus/locomo', import.meta.url))
  return existsSync(`${folder}/turns-dev/corpus.jsonl`) ? folder : undefined
}

/**
 * Measures the hashed embedder on short English (chat turns, ~15 words), long
 * English (~300 words) and short Chinese texts (~25 characters).
 * @example
 * for (const row of await runEmbedBench()) console.log(row.name, row.value, row.unit)
 */
export async function runEmbedBench(): Promise<BenchResult[]> {
  const next = seededRandom(42)
  const shortEnglish = Array.from({ length: 2_000 }, () => englishText(next, 15))
  const longEnglish = Array.from({ length: 200 }, () => englishText(next, 300))
  const chinese = Array.from({ length: 2_000 }, () => chineseText(next, 12))
  const round = (value: number): number => Math.round(value)
  const results: BenchResult[] = [
    {
      name: 'hashed embed, short English (~15 words)',
      value: round(await throughput(shortEnglish)),
      unit: 'texts/s',
      target: '>= 5000',
      note: 'dimension 512, one core',
    },
    { name: 'hashed embed, long English (~300 words)', value: round(await throughput(longEnglish)), unit: 'texts/s', note: 'dimension 512, one core' },
    {
      name: 'hashed embed, short Chinese (~25 characters)',
      value: round(await throughput(chinese)),
      unit: 'texts/s',
      note: 'dimension 512, one core; Intl.Segmenter takes about half',
    },
  ]
  const locomo = locomoFolder()
  if (locomo) {
    // BM25 reference numbers from the corpus's SOURCE.md.
    const bm25: Record<string, { recall: number; ndcg: number }> = { 'turns-dev': { recall: 0.572, ndcg: 0.447 }, 'facts-dev': { recall: 0.64, ndcg: 0.539 } }
    for (const view of ['turns-dev', 'facts-dev']) {
      for (const dimension of [512, 1024]) {
        const { recall, ndcg, queries } = await locomoRetrieval(`${locomo}/${view}`, dimension)
        const reference = bm25[view]!
        const note = `hashed-ngram-v1-${dimension}, dense only, ${queries} queries; BM25 reference`
        results.push(
          { name: `LoCoMo ${view} recall@10, hashed ${dimension}`, value: Number(recall.toFixed(3)), unit: 'recall', note: `${note} ${reference.recall}` },
          { name: `LoCoMo ${view} nDCG@10, hashed ${dimension}`, value: Number(ndcg.toFixed(3)), unit: 'nDCG', note: `${note} ${reference.ndcg}` },
        )
      }
    }
  }
  return results
}

async function main(): Promise<void> {
  const results = await runEmbedBench()
  console.table(results)
  const folder = fileURLToPath(new URL('./results/', import.meta.url))
  await mkdir(folder, { recursive: true })
  const file = `${folder}embed.json`
  await writeFile(file, `${JSON.stringify({ node: process.version, date: new Date().toISOString(), results }, null, 2)}\n`)
  console.log(`wrote ${file}`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
