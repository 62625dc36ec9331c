/**
 * The user's path with a real model behind `openai` (issue 40), through the CLI in this process:
 * `knowhub status` names the embedder, its query/document convention and its calibration; a search
 * finds a paraphrase; a changed convention is a changed embedder (`embedder_mismatch` until
 * `knowhub reindex`); `knowhub eval --embedder openai` evaluates the configured model.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli, useCliEnv } from '../helpers/cli.js'
import { useModel } from '../helpers/models.js'

const e5 = useModel('embedding')
const env = useCliEnv('e5-cli', { KNOWHUB_EMBEDDER: 'openai', KNOWHUB_EMBED_CONVENTION: undefined, KNOWHUB_USER: 'dev' })

describe.skipIf(!e5.available)('the CLI with multilingual-e5-small behind the openai provider', () => {
  beforeAll(async () => {
    const server = await e5.server()
    process.env.KNOWHUB_EMBED_URL = server.url
    process.env.KNOWHUB_EMBED_MODEL = server.model
  }, 120_000)

  it('status names the model, the convention and the calibration; a search finds the paraphrase', async () => {
    const save = await runCli('save', '--task', '用户的编程语言偏好', '--content', '用户偏好 TypeScript 而非 JavaScript', '--type', 'user_profile')
    expect(save.code, save.stderr).toBe(0)
    const status = await runCli('status')
    expect(status.stdout).toContain('embedder:  openai:multilingual-e5-small-q4#e5-input-type (384 dimensions), vectors ready')
    expect(status.stdout).toContain("queries and documents: e5-input-type (KnowHub's table of known models)")
    expect(status.stdout).toContain('calibration: multilingual-e5-small (learned)')
    const json = JSON.parse((await runCli('status', '--json')).stdout) as { embedder: unknown }
    expect(json.embedder).toEqual({
      model: 'openai:multilingual-e5-small-q4#e5-input-type',
      dimension: 384,
      convention: { name: 'e5-input-type', source: 'table' },
      calibration: { source: 'table', name: 'multilingual-e5-small (learned)' },
    })
    const found = await runCli('search', '用户喜欢什么语言', '--json')
    expect((JSON.parse(found.stdout) as { results: Array<{ task: string }> }).results.map((r) => r.task)).toEqual(['用户的编程语言偏好'])
  })

  it('another convention is another embedder: embedder_mismatch until reindex', async () => {
    process.env.KNOWHUB_EMBED_CONVENTION = 'none'
    try {
      const refused = await runCli('search', '用户喜欢什么语言')
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('error [embedder_mismatch]')
      expect((await runCli('reindex')).code).toBe(0)
      const status = await runCli('status')
      expect(status.stdout).toContain('openai:multilingual-e5-small-q4 (384 dimensions), vectors ready')
      expect(status.stdout).toContain('queries and documents: none (as configured)')
    } finally {
      delete process.env.KNOWHUB_EMBED_CONVENTION
    }
    expect((await runCli('reindex')).code).toBe(0)
  })

  it('eval --embedder openai evaluates the configured model', async () => {
    const set = join(env.dir, 'set')
    mkdirSync(set)
    const lines = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'
    writeFileSync(
      join(set, 'corpus.jsonl'),
      lines([
        { id: 'd1', text: '用户偏好 TypeScript 而非 JavaScript' },
        { id: 'd2', text: 'Run docker compose up -d on the staging host' },
        { id: 'd3', text: '每天凌晨两点用 pg_dump 备份数据库' },
      ]),
    )
    writeFileSync(join(set, 'queries.jsonl'), lines([{ id: 'q1', text: '用户喜欢什么编程语言' }]))
    writeFileSync(join(set, 'qrels.jsonl'), lines([{ query_id: 'q1', doc_id: 'd1' }]))
    const run = await runCli('eval', set, '--embedder', 'openai', '--json')
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as { embedder: string; calibration: string; runs: Array<{ 'recall@10': number }> }
    expect(report).toMatchObject({ embedder: 'openai:multilingual-e5-small-q4#e5-input-type', calibration: 'multilingual-e5-small (learned)' })
    expect(report.runs[0]!['recall@10']).toBe(1)
  })
})
