/**
 * The knowledge commands, run in-process through the real program against an
 * embedded database in a temp dir.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, useCliEnv } from '../helpers/cli.js'

const run = runCli

describe('knowhub knowledge commands', () => {
  const env = useCliEnv('cli', { KNOWHUB_USER: 'dev', KNOWHUB_ORG: 'acme' })

  it('saves, searches, shows, gives feedback, lists, exports and imports', async () => {
    const save = await run(
      'save',
      '--task',
      'Log in to site A with Selenium',
      '--content',
      'undetected_chromedriver avoids bot checks',
      '--type',
      'tool',
      '--type',
      'strategy',
      '--tag',
      'domain=crawling',
      '--scope',
      'org:acme',
      '--json',
    )
    expect(save.code).toBe(0)
    const entry = JSON.parse(save.stdout) as { id: string; scopes: string[]; tags: Record<string, string>; owner: string }
    expect(entry).toMatchObject({ scopes: ['org:acme'], tags: { domain: 'crawling' }, owner: 'user:dev' })

    const search = await run('search', 'selenium bot login')
    expect(search.stdout).toContain(entry.id)
    const searchJson = JSON.parse((await run('search', 'selenium bot login', '--json', '--explain')).stdout) as {
      count: number
      results: Array<{ id: string; explain: unknown }>
    }
    expect(searchJson.count).toBe(1)
    expect(searchJson.results[0]?.explain).toMatchObject({ evidence: 'words' })
    // --mode recall reaches the search: the recall gate labels what it keeps too.
    const recall = JSON.parse((await run('search', 'selenium bot login', '--mode', 'recall', '--json', '--explain')).stdout) as typeof searchJson
    expect(recall.results.map((r) => r.id)).toEqual([entry.id])
    expect((await run('search', 'selenium', '--mode', 'precise')).code).not.toBe(0)

    expect((await run('feedback', entry.id, '--helpful', '--task', 'scrape', '--outcome', 'worked')).stdout).toContain('helpful 1')
    const shown = await run('show', entry.id)
    expect(shown.stdout).toContain('helpful 1')
    expect(shown.stdout).toContain('undetected_chromedriver')
    expect((await run('list', '--types', 'tool')).stdout).toContain(entry.id)
    expect((await run('list', '--types', 'plan')).stdout).toContain('no entries')

    const file = join(env.dir, 'backup.jsonl')
    expect((await run('export', '-o', file)).code).toBe(0)
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1)
    const again = await run('import', file)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/line 1: \[conflict\]/)
    expect((await run('import', file, '--on-conflict', 'skip')).stdout).toContain('imported 0, skipped 1')
  })

  it('supersedes by hand: search answers with the current entry, --include superseded and --as-of give the history (#31)', async () => {
    const saved = async (task: string, content: string, validFrom: string): Promise<string> => {
      const result = await run('save', '--task', task, '--content', content, '--type', 'tool', '--valid-from', validFrom, '--json')
      expect(result.code).toBe(0)
      return (JSON.parse(result.stdout) as { id: string }).id
    }
    const jenkins = await saved('Which CI runs our builds', 'Builds run on Jenkins', '2025-01-10')
    const actions = await saved('Which CI runs our builds', 'Builds run on GitHub Actions since the move', '2026-03-01')
    const done = await run('supersede', jenkins, '--by', actions)
    expect(done.code).toBe(0)
    expect(done.stdout).toContain(`${jenkins} is superseded by ${actions}`)
    const ids = async (...args: string[]): Promise<string[]> =>
      (JSON.parse((await run('search', 'which CI runs builds', '--json', ...args)).stdout) as { results: Array<{ id: string }> }).results.map((r) => r.id)
    expect(await ids()).toEqual([actions])
    expect(await ids('--as-of', '2025-06-01')).toEqual([jenkins])
    expect((await ids('--include', 'superseded')).sort()).toEqual([actions, jenkins].sort())
    const history = await run('search', 'which CI runs builds', '--include', 'superseded')
    expect(history.stdout).toMatch(new RegExp(`${jenkins}.*superseded by ${actions}`))
    expect((await run('show', jenkins)).stdout).toContain(`superseded by ${actions}`)
    // Superseding again, or by itself, is refused with a code; nothing changes.
    const again = await run('supersede', jenkins, '--by', actions)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/error \[\w+\]/)
    expect((await run('supersede', actions, '--by', actions)).code).toBe(1)
    expect(await ids()).toEqual([actions])
  })

  it('reports bad import lines by number and imports nothing by default', async () => {
    const file = join(env.dir, 'bad.jsonl')
    writeFileSync(file, '{"id": "x"}\nnot json\n')
    const result = await run('import', file)
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/line 1: \[invalid_import\]/)
    expect(result.stderr).toMatch(/line 2: \[invalid_import\] not valid JSON/)
    expect(result.stdout).toContain('nothing imported')
  })

  it('gives clear errors with stable codes and a non-zero exit', async () => {
    const missing = await run('show', 'knowledge-20990101000000-zzzz')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('error [not_found]')
    const badType = await run('save', '--task', 't', '--content', 'c', '--type', 'magic')
    expect(badType.stderr).toContain('error [validation_error]')
    const badScope = await run('save', '--task', 't', '--content', 'c', '--type', 'tool', '--scope', 'org acme')
    expect(badScope.stderr).toContain('error [validation_error]')
    expect(badScope.stderr).toContain('scopes.0')
    const noContent = await run('save', '--task', 't', '--type', 'tool')
    expect(noContent.stderr).toMatch(/--content/)
    const unknown = await run('frobnicate')
    expect(unknown.code).not.toBe(0)
  })

  it('has --help for every command', async () => {
    for (const command of ['save', 'search', 'list', 'show', 'feedback', 'export', 'import', 'reindex', 'status']) {
      const help = await run(command, '--help')
      expect(help.stdout, command).toMatch(/Usage: knowhub/)
    }
    const root = await run('--help')
    expect(root.stdout).toContain('KNOWHUB_DATA_DIR')
  })

  it('detects a changed embedder, reindexes with progress and reports status', async () => {
    const before = JSON.parse((await run('status', '--json')).stdout) as { embedder: { model: string } }
    // Switch to the other offline embedder: the stored vectors no longer match it.
    const other = before.embedder.model.startsWith('hashed') ? 'sentence' : 'hashed'
    process.env.KNOWHUB_EMBEDDER = other
    try {
      const refused = await run('search', 'selenium')
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('error [embedder_mismatch]')
      const result = await run('reindex')
      expect(result.stdout).toMatch(/re-embedded [1-9]\d* entries/)
      expect(result.stderr).toMatch(/reindexing: \d+\/\d+/)
      const status = JSON.parse((await run('status', '--json')).stdout) as { database: string; vectors: string; embedder: { model: string } }
      expect(status).toMatchObject({ database: 'pglite', vectors: 'ready' })
      expect(status.embedder.model).not.toBe(before.embedder.model)
      expect(status.embedder.model.startsWith('hashed')).toBe(other === 'hashed')
      expect((await run('search', 'selenium bot login')).code).toBe(0)
    } finally {
      delete process.env.KNOWHUB_EMBEDDER
    }
  })
})
