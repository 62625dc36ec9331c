/**
 * `knowhub import` takes what a user has: lines as `knowhub export` writes them and lines in
 * the shape `POST /api/knowledge` takes, detected per line, in this process and through a
 * server's import endpoint; all or nothing by default; a missing file said in words; no
 * `0/0` progress line.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatDuration, progress, type Io } from '../../src/cli/output.js'
import { runCli, useCliEnv } from '../helpers/cli.js'
import { openTestHub } from '../server/helpers.js'

const env = useCliEnv('import', { KNOWHUB_USER: 'dev', KNOWHUB_ORG: 'acme', KNOWHUB_EMBEDDER: 'hashed' })

const postShaped = [
  {
    task: 'Deploy with pnpm in Docker',
    content: 'corepack enable before pnpm install',
    types: ['tool'],
    tags: { stack: 'node' },
    scopes: ['org:acme'],
    owner: 'user:dev',
    source: { name: 'runbook', urls: ['https://example.com/runbook'] },
    score: 4,
  },
  { task: 'Rotate logs', content: 'copytruncate keeps the file handle valid', types: ['tool', 'strategy'] },
]

interface Entry {
  id: string
  task: string
  tags: Record<string, string>
  scopes: string[]
  owner: string
  source: { name: string; urls: string[] }
  eval: { score: number }
  version: number
}

function write(name: string, lines: unknown[]): string {
  const file = join(env.dir, name)
  writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n')
  return file
}

describe('knowhub import', () => {
  it('imports exported lines and POST /api/knowledge bodies side by side, and export stays lossless', async () => {
    const save = await runCli('save', '--task', 'Log in to site A', '--content', 'Use the test account', '--type', 'tool', '--json')
    expect(save.code, save.stderr).toBe(0)
    const exported = join(env.dir, 'one.jsonl')
    expect((await runCli('export', '-o', exported)).code).toBe(0)
    const exportedLine = readFileSync(exported, 'utf8').trim()
    // The exported entry (replaced by itself) and two POST-shaped lines, in one file.
    const mixed = write('mixed.jsonl', [postShaped[0], exportedLine, postShaped[1]])
    const run = await runCli('import', mixed, '--on-conflict', 'replace', '--json')
    expect(run.code, run.stdout).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ imported: 3, skipped: 0, errors: [] })
    // No silent phase: before the first write and after the last one, a line says what runs.
    expect(run.stderr).toContain(`importing: reading and checking ${mixed}…`)
    expect(run.stderr).toContain('importing: 3/3')
    expect(run.stderr.indexOf('importing: 3/3')).toBeLessThan(run.stderr.indexOf('importing: finishing (search statistics, commit)…'))

    const list = JSON.parse((await runCli('list', '--json', '-n', '10')).stdout) as { items: Entry[] }
    expect(list.items).toHaveLength(3)
    const pnpm = list.items.find((e) => e.task === 'Deploy with pnpm in Docker')!
    expect(pnpm).toMatchObject({
      tags: { stack: 'node' },
      scopes: ['org:acme'],
      owner: 'user:dev',
      source: { name: 'runbook', urls: ['https://example.com/runbook'] },
      eval: { score: 4 },
      version: 1,
    })
    expect(pnpm.id).toMatch(/^knowledge-\d{14}-[a-z0-9]{4}$/)
    // Defaults as a save makes them: the caller's user scope and ownership.
    expect(list.items.find((e) => e.task === 'Rotate logs')).toMatchObject({ scopes: ['user:dev'], owner: 'user:dev', eval: { score: 3 } })

    // Export → import with replace → export: the same text (lossless).
    const before = join(env.dir, 'all-before.jsonl')
    const after = join(env.dir, 'all-after.jsonl')
    await runCli('export', '-o', before)
    expect((await runCli('import', before, '--on-conflict', 'replace')).stdout).toContain('imported 3, skipped 0, bad lines 0')
    await runCli('export', '-o', after)
    expect(readFileSync(after, 'utf8')).toBe(readFileSync(before, 'utf8'))
  })

  it('imports nothing when one POST-shaped line is bad, naming the line, the shape it was read as and the field', async () => {
    const before = (JSON.parse((await runCli('list', '--json', '-n', '50')).stdout) as { items: Entry[] }).items.length
    const file = write('bad.jsonl', [
      postShaped[1],
      { task: 'Bogus type', content: 'x', types: ['bogus'] },
      { task: 'Extra field', content: 'x', types: ['tool'], colour: 'red' },
      '[1,2]',
      { task: 'Elsewhere', content: 'x', types: ['tool'], scopes: ['team:other'] },
    ])
    const run = await runCli('import', file)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/line 2: \[invalid_import\] \(read as a POST \/api\/knowledge body: the line has no id\) types\.0: /)
    expect(run.stderr).toMatch(/line 3: \[invalid_import\] .*colour/)
    expect(run.stderr).toMatch(/line 4: \[invalid_import\] a line must be a JSON object/)
    expect(run.stderr).toMatch(/line 5: \[forbidden\]/)
    expect(run.stdout).toContain('imported 0, skipped 0, bad lines 4 (nothing imported')
    expect((JSON.parse((await runCli('list', '--json', '-n', '50')).stdout) as { items: Entry[] }).items).toHaveLength(before)
    // --partial imports the good line.
    expect((await runCli('import', file, '--partial')).stdout).toContain('imported 1, skipped 0, bad lines 4')
  })

  it('says in words that the file is missing or a folder that is not a knowledge folder, not ENOENT', async () => {
    const missing = await runCli('import', join(env.dir, 'nope.jsonl'))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(`error [not_found]: There is no file ${join(env.dir, 'nope.jsonl')} to import (give a JSONL file, or - for stdin)`)
    expect(missing.stderr).not.toContain('ENOENT')
    const folder = join(env.dir, 'a-folder')
    mkdirSync(folder)
    const json = await runCli('import', folder, '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { code: 'validation_error', message: expect.stringContaining(`${folder} is a folder but not a knowledge folder`) },
    })
  })

  it('never prints 0/0 progress: nothing to write, nothing printed', async () => {
    const exported = join(env.dir, 'skip.jsonl')
    await runCli('export', '-o', exported)
    const run = await runCli('import', exported, '--on-conflict', 'skip')
    expect(run.stdout).toMatch(/imported 0, skipped \d+, bad lines 0/)
    expect(run.stderr).not.toMatch(/0\/0/)
    const lines: string[] = []
    const io: Io = { out: () => {}, err: (t) => void lines.push(t), interactive: false }
    const bar = progress(io, 'importing')
    bar.update(0, 0)
    bar.stop()
    expect(lines).toEqual([])
    let clock = 0
    const some = progress(io, 'importing', () => clock)
    some.update(0, 2000)
    clock = 1000
    some.update(400, 2000)
    clock = 2000
    some.update(2000, 2000)
    // The rate so far and the time left at that rate.
    expect(lines).toEqual(['importing: 0/2000', 'importing: 400/2000 (400/s, 4 s left)', 'importing: 2000/2000 (1,000/s, 0 s left)'])
    expect(formatDuration(3725)).toBe('1 h 02 min')
    expect(formatDuration(185)).toBe('3 min 05 s')
  })

  it("takes POST-shaped lines through a server's import endpoint too (--url)", async () => {
    const t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
    try {
      const server = await t.start()
      const file = write('remote.jsonl', [{ task: 'Remote entry', content: 'saved over HTTP', types: ['usecase'], tags: { via: 'http' } }])
      const run = await runCli('import', file, '--url', server.url, '--json')
      expect(run.code, run.stdout).toBe(0)
      expect(JSON.parse(run.stdout)).toEqual({ imported: 1, skipped: 0, errors: [] })
      const page = await t.hub.knowledge.list({}, t.hub.config.principal)
      expect(page.items.map((e) => [e.task, e.tags, e.owner])).toEqual([['Remote entry', { via: 'http' }, `user:${t.hub.config.principal.user}`]])
    } finally {
      await t.close()
    }
  }, 120_000)
})
