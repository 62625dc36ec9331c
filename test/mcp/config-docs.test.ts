/**
 * MCP configurations in the docs and in `knowhub mcp --help` name a global `knowhub` (npm link)
 * or `node /absolute/path/to/knowhub/bin/knowhub.js`, never `npx knowhub`: agents start MCP
 * servers outside this repository, where npx would fetch the unrelated npm package that owns
 * the name `knowhub`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'

const ROOT = join(import.meta.dirname, '..', '..')
const NPX_MCP = [/npx\s+knowhub\s+mcp/, /"command"\s*:\s*"npx"/, /command\s*=\s*"npx"/, /--\s+npx\s+knowhub/]

function docs(): string[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f))]
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)]))
  return [...files, ...walk('examples')].filter((f) => /\.(md|ts|json|toml)$/.test(f))
}

describe('MCP configs never run npx knowhub', () => {
  it('in the README, docs/ and examples/', () => {
    const found = docs().flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (NPX_MCP.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    )
    expect(found).toEqual([])
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    expect(readme).toContain('claude mcp add knowhub -e KNOWHUB_DATA_DIR=$HOME/.knowhub -- knowhub mcp')
    expect(readme).toContain('"command": "node", "args": ["/absolute/path/to/knowhub/bin/knowhub.js", "mcp"]')
  })

  it('in knowhub mcp --help', async () => {
    const help = await runCli('mcp', '--help')
    expect(help.stdout).toContain('-- knowhub mcp')
    for (const re of NPX_MCP) expect(help.stdout).not.toMatch(re)
  })
})
