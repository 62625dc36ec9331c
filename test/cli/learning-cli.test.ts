/**
 * The learning commands of the CLI against a real OpenAI-compatible HTTP server started by the
 * test: `knowhub extract FILE` proposes, then saves; `knowhub evolve ID` rewrites with the
 * previous version kept (`show --versions` prints the diff); a garbage answer (the entry stays,
 * issue 43), a missing file and invalid JSON each exit non-zero with a clear message and leave
 * the store as it was;
 * beside a running server, `extract` runs there.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestHub } from '../server/helpers.js'

const proposal = {
  types: ['tool'],
  task: 'Install pnpm in Docker',
  content: 'Run corepack enable before pnpm install.',
  tags: { domain: 'ci' },
  message_ids: ['m1'],
}
/** The extraction's dedupe pass (its prompt says "free of duplicates") keeps everything; the first pass proposes one entry. */
const extractor = (request: { messages: Array<{ content: unknown }> }) =>
  String(request.messages[0]?.content).includes('free of duplicates') ? JSON.stringify({ decisions: [] }) : JSON.stringify({ entries: [proposal] })

let dir: string
let stub: OpenAIStub
const saved = { ...process.env }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-learning-cli-'))
  stub = await startOpenAIStub({ chat: extractor })
  for (const name of ['DATABASE_URL', 'KNOWHUB_URL', 'KNOWHUB_TOKEN']) delete process.env[name]
  Object.assign(process.env, {
    KNOWHUB_DATA_DIR: join(dir, 'data'),
    KNOWHUB_USER: 'dev',
    KNOWHUB_EMBEDDER: 'hashed',
    KNOWHUB_EMBED_DIM: '64',
    KNOWHUB_LLM_URL: stub.url,
    KNOWHUB_LLM_MODEL: 'stub-chat',
  })
  writeFileSync(join(dir, 'chat.json'), JSON.stringify([{ id: 'm1', role: 'user', content: 'pnpm was missing in the image; corepack enable fixed it' }]))
})
afterAll(async () => {
  process.env = saved
  await stub?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('knowhub extract and evolve', () => {
  it('extract proposes without writing, then saves with --save', async () => {
    const proposed = await runCli('extract', join(dir, 'chat.json'))
    expect(proposed.code).toBe(0)
    expect(proposed.stdout).toContain('would add (new) [tool] Install pnpm in Docker')
    expect(proposed.stdout).toMatch(/llm calls: [12]/)
    expect((await runCli('list', '--json')).stdout).toContain('"items": []')

    const saved = await runCli('extract', join(dir, 'chat.json'), '--save', '--trace-id', 'tr-9', '--json')
    expect(saved.code).toBe(0)
    const id = (JSON.parse(saved.stdout) as { items: Array<{ id: string }> }).items[0]!.id
    const shown = JSON.parse((await runCli('show', id, '--json')).stdout) as { content: string; source: { trace_id?: string } }
    expect(shown).toMatchObject({ content: proposal.content, source: { trace_id: 'tr-9' } })
  })

  it('evolve rewrites and keeps the previous version; a garbage answer changes nothing', async () => {
    const save = await runCli('save', '--task', 'Cache pnpm in CI', '--content', 'Use the pnpm store path as the cache key.', '--type', 'strategy', '--json')
    const id = (JSON.parse(save.stdout) as { id: string }).id

    stub.setChat(() => JSON.stringify({ content: 'Cache ~/.local/share/pnpm/store keyed by the lockfile hash.' }))
    // The rewrite may only say what the entry and the feedback say (issue 43).
    const evolved = await runCli('evolve', id, '--feedback', 'name the path ~/.local/share/pnpm/store, keyed by the lockfile hash')
    expect(evolved.code).toBe(0)
    expect(evolved.stdout.split('\n')[0]).toBe(`evolved ${id} to version 2`)
    const versions = await runCli('show', id, '--versions')
    expect(versions.stdout).toContain('--- version 1')
    expect(versions.stdout).toContain('-Use the pnpm store path as the cache key.')
    expect(versions.stdout).toContain('+Cache ~/.local/share/pnpm/store keyed by the lockfile hash.')

    stub.setChat(() => 'Looks good to me!')
    const garbage = await runCli('evolve', id, '--feedback', 'shorter')
    expect(garbage.code).not.toBe(0)
    expect(garbage.stderr).toContain("not evolved (failed): the model's answer could not be used (not_json)")
    const after = JSON.parse((await runCli('show', id, '--json')).stdout) as { version: number; content: string }
    expect(after).toMatchObject({ version: 2, content: 'Cache ~/.local/share/pnpm/store keyed by the lockfile hash.' })
    stub.setChat(extractor)
  })

  it('status says how structured answers are asked for and what failed (issue 43)', async () => {
    const status = await runCli('status')
    expect(status.code).toBe(0)
    expect(status.stdout).toContain('  structured output: json_schema\n')
    expect(status.stdout).toMatch(/ {2}failures since start: none; answers cut at max_tokens: 0\n/)
  })

  it('extract names a missing file and invalid JSON', async () => {
    const missing = await runCli('extract', join(dir, 'nope.json'))
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain(`Cannot read ${join(dir, 'nope.json')}`)
    writeFileSync(join(dir, 'bad.json'), '[{"role": "user", "content": ')
    const bad = await runCli('extract', join(dir, 'bad.json'))
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain('as JSON')
  })

  it('extract runs on the KnowHub server that holds the data folder, with the server’s LLM', async () => {
    const t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 }, llm: { url: stub.url, model: 'served', retries: 0, timeoutMs: 30_000 } })
    try {
      if (t.hub.config.databaseUrl) throw new Error('test/cli runs on the embedded database only')
      await t.start()
      process.env.KNOWHUB_DATA_DIR = t.dataDir
      const before = stub.requests.length
      const result = await runCli('extract', join(dir, 'chat.json'))
      expect(result).toMatchObject({ code: 0, stderr: expect.stringContaining('running this command there') })
      expect(result.stderr).toMatch(/holds .*: running this command there/)
      expect(result.stdout).toContain('would add (new) [tool] Install pnpm in Docker')
      expect(stub.requests.slice(before).map((r) => (r.body as { model?: string }).model)).toContain('served')
    } finally {
      await t.close()
    }
  })
})
