/**
 * The documentation matches the code (issue 42):
 *
 * - every page of docs/ is reachable from the README, directly or through pages it links, and every
 *   relative link of README.md, CONTRIBUTING.md and docs/ leads to a file that exists;
 * - no command block tells anyone to run `npx knowhub` (that name on npm is another package);
 * - the shell blocks marked runnable (```` ```sh runnable ````) run, in order, each page in a new
 *   folder with a fresh HOME and data folder, with `knowhub` the checkout's bin/knowhub.js on the
 *   PATH; `<ENTRY_ID>` and `<TOKEN_ID>` are the last entry id and token id printed before;
 * - a sample of output marked ```` ```text sample ```` is the command's output today (its figures:
 *   the columns that do not depend on the machine);
 * - docs/mcp.md names the tools `/mcp` serves without packs, as a real server lists them.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, normalize } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, describe, expect, it } from 'vitest'
import { openTestHub } from '../server/helpers.js'
import { ROOT } from '../helpers/readme.js'

const DOCS = join(ROOT, 'docs')
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]
const read = (page: string): string => readFileSync(join(ROOT, page), 'utf8')

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The relative links of a page (no URLs, no pure anchors), resolved from the repository root, without their anchors. */
function linksOf(page: string): string[] {
  const text = read(page).replace(/```[\s\S]*?```/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/i.test(href) && !href.startsWith('#'))
    .map((href) => normalize(join(dirname(page), href.split('#')[0]!)))
}

/** The fenced blocks of a page with their info string. */
function blocksOf(page: string): Array<{ info: string; body: string }> {
  return [...read(page).matchAll(/^```([^\n]*)\n([\s\S]*?)^```/gm)].map((m) => ({ info: m[1]!.trim(), body: m[2]! }))
}

/** A block's commands: continuation lines joined, comments dropped. */
function commandsOf(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

/** A folder with a `knowhub` that runs this checkout's bin/knowhub.js, as `npm link` or a global install gives. */
function knowhubOnPath(dir: string): string {
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'knowhub'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin', 'knowhub.js')}" "$@"\n`)
  chmodSync(join(bin, 'knowhub'), 0o755)
  return bin
}

describe('the docs', () => {
  it('are all reachable from the README, and every relative link leads somewhere', () => {
    const seen = new Set<string>(['README.md'])
    const queue = ['README.md']
    const broken: string[] = []
    while (queue.length > 0) {
      const page = queue.shift()!
      for (const target of linksOf(page)) {
        if (!existsSync(join(ROOT, target))) broken.push(`${page} → ${target}`)
        else if (target.endsWith('.md') && !seen.has(target)) {
          seen.add(target)
          queue.push(target)
        }
      }
    }
    for (const page of PAGES) for (const target of linksOf(page)) if (!existsSync(join(ROOT, target))) broken.push(`${page} → ${target}`)
    expect([...new Set(broken)]).toEqual([])
    expect(PAGES.filter((page) => page.startsWith('docs/') && !seen.has(page))).toEqual([])
  })

  it('never tell anyone to run npx knowhub', () => {
    const told = PAGES.flatMap((page) =>
      blocksOf(page)
        .filter((block) => /^(sh|bash|yaml|yml|json|toml)\b/.test(block.info))
        .flatMap((block) => block.body.split('\n').filter((line) => /\bnpx\s+knowhub\b/.test(line) && !/\bnever\b|\bnot\b/i.test(line)))
        .map((line) => `${page}: ${line.trim()}`),
    )
    expect(told).toEqual([])
  })

  it('run their runnable commands as written', () => {
    const runnable = PAGES.map((page) => ({
      page,
      commands: blocksOf(page)
        .filter((b) => b.info === 'sh runnable')
        .flatMap((b) => commandsOf(b.body)),
    })).filter((p) => p.commands.length > 0)
    expect(runnable.map((p) => p.page).sort()).toEqual(['docs/operations.md', 'docs/packs.md', 'docs/server.md'])
    for (const { page, commands } of runnable) {
      const dir = mkdtempSync(join(tmpdir(), 'knowhub-docs-'))
      dirs.push(dir)
      const work = join(dir, 'work')
      mkdirSync(work)
      const env: NodeJS.ProcessEnv = { PATH: `${knowhubOnPath(dir)}:${process.env.PATH}`, HOME: dir, KNOWHUB_EMBEDDER: 'hashed' }
      let entry: string | undefined
      let token: string | undefined
      for (const written of commands) {
        const command = written.replaceAll('<ENTRY_ID>', entry ?? '<ENTRY_ID>').replaceAll('<TOKEN_ID>', token ?? '<TOKEN_ID>')
        const ran = spawnSync('bash', ['-c', command], { cwd: work, env, encoding: 'utf8', timeout: 120_000 })
        expect(ran.status, `${page}: ${command}\n${ran.stdout}\n${ran.stderr}`).toBe(0)
        const printed = `${ran.stdout}\n${ran.stderr}`
        entry = [...printed.matchAll(/\bknowledge-\d{14}-[a-z0-9]{4}\b/g)].at(-1)?.[0] ?? entry
        token = [...printed.matchAll(/\btok_[A-Za-z0-9]+\b/g)].at(-1)?.[0] ?? token
      }
    }
  }, 600_000)

  it('show samples of output that the commands print today', () => {
    const samples = PAGES.flatMap((page) =>
      blocksOf(page)
        .filter((b) => b.info === 'text sample')
        .map((b) => ({ page, body: b.body })),
    )
    expect(samples.length).toBeGreaterThan(0)
    for (const { page, body } of samples) {
      const [first, ...expected] = body.trimEnd().split('\n')
      expect(first, page).toMatch(/^\$ knowhub /)
      const ran = spawnSync(process.execPath, [join(ROOT, 'bin', 'knowhub.js'), ...first!.slice('$ knowhub '.length).split(' ')], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: tmpdir() },
        encoding: 'utf8',
        timeout: 300_000,
      })
      expect(ran.status, ran.stderr).toBe(0)
      // The table rows: every column but the timings (p50, p95, queries a second), which vary with the machine.
      const rows = (text: string) =>
        text
          .split('\n')
          .filter((line) => /^\S+\s+\S+\s+(yes|no)\s+\d+\s+\d/.test(line))
          .map((line) => line.trim().split(/\s+/).slice(0, -3).join(' '))
      expect(rows(ran.stdout), `${page}: ${first}`).toEqual(rows(expected.join('\n')))
      expect(rows(ran.stdout).length).toBeGreaterThan(0)
    }
  }, 600_000)

  it('name the tools /mcp serves without packs, as a real server lists them', async () => {
    const t = await openTestHub({ embedder: { provider: 'hashed' } })
    try {
      const server = await t.start()
      const client = new Client({ name: 'docs-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url)))
      const served = (await client.listTools()).tools.map((tool) => tool.name)
      await client.close()
      const sentence = /without them `\/mcp` offers (\d+) tools: ([^.]+)\./.exec(read('docs/mcp.md').replace(/\s+/g, ' '))
      expect(sentence, 'docs/mcp.md: "without them `/mcp` offers N tools: …"').not.toBeNull()
      expect(Number(sentence![1])).toBe(served.length)
      expect([...sentence![2]!.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort()).toEqual([...served].sort())
    } finally {
      await t.close()
    }
  }, 120_000)
})
