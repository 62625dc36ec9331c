/**
 * The frontmatter fast path answers only what the real YAML parser would:
 * differential tests against the `yaml` package on the fixture packs, the
 * benchmark's generated packs, and a corpus of tricky values.
 */
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { parseDocument } from 'yaml'
import { describe, expect, it } from 'vitest'
import { parseFrontmatterYaml, splitFrontmatter } from '../../src/packs/index.js'
import { parseSimpleYaml } from '../../src/packs/simple-yaml.js'
import { FIXTURES } from './helpers.js'

function reference(yaml: string): unknown {
  const doc = parseDocument(yaml, { uniqueKeys: true })
  return doc.errors.length > 0 ? { errors: doc.errors.length } : doc.toJS()
}

/** The fast path either declines or agrees with the YAML parser. */
function agrees(yaml: string): boolean {
  const fast = parseSimpleYaml(yaml)
  if (fast === undefined) return true
  expect(fast, JSON.stringify(yaml)).toEqual(reference(yaml))
  return true
}

async function knowledgeFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await knowledgeFiles(path)))
    else if (entry.name === 'KNOWLEDGE.md') out.push(path)
  }
  return out
}

const VALUES = [
  'acme', 'Acme Widget product facts, pricing and approved claims.', "Acme's widget", 'C# and F# notes', 'a [b] {c}, d', 'x: y', 'x:', 'x #c', 'x#c',
  '1.0', '1.2.0', '2026-05-01', '2026-05-01T00:00:00Z', '0x1F', '0o17', '017', '1_000', '1e3', '.5', '+1', '-1', '.inf', '-.Inf', '.nan', 'NaN', 'Infinity',
  'true', 'True', 'false', 'yes', 'No', 'on', 'OFF', 'y', 'n', 'null', 'Null', '~', '', ' ', "'quoted'", "'it''s'", "'bad ' quote'", '"double"', '"esc \\n"',
  '"a"b', "'a'b", '>-', '|', '- item', '-item', '&anchor x', '*alias', '!tag x', '%x', '@x', '`x`', '[a, b]', '{a: 1}', '?x', ',x', 'a\tb', 'ünïcödé 中文 🚀',
  'trailing  ', 'a  b', 'zh-CN', 'custom:acme-notes', 'documents/acme-product-brief.md', '=', '<<', '\u00a0lead', 'a\u2028b', 'a\u0085b', 'sha256:abc',
]

describe('frontmatter fast path', () => {
  it('agrees with the YAML parser on every fixture pack, and answers for most of them', async () => {
    let answered = 0
    let total = 0
    for (const file of await knowledgeFiles(FIXTURES)) {
      const split = splitFrontmatter(await readFile(file, 'utf8'))
      if (!split.ok) continue
      total++
      if (parseSimpleYaml(split.yaml) !== undefined) answered++
      agrees(split.yaml)
    }
    expect(total).toBeGreaterThan(20)
    expect(answered).toBeGreaterThan(total / 2)
  })

  it('agrees with the YAML parser on keys, values and layouts it may or may not take', () => {
    for (const value of VALUES) {
      agrees(`name: ${value}`)
      agrees(`name: x\nruntime:\n  mode: ${value}\n  other: y`)
      agrees(`description: ${value}\nname: y`)
    }
    const layouts = [
      'name: a\nname: b', 'name: a\n  more: b', 'runtime:\n  mode: data\n    deeper: x', 'runtime:\n  mode: data\n mode2: x', 'runtime:\nname: a', 'runtime:',
      'name: a\n# comment\nruntime:\n  # inner comment\n  mode: data', 'name: a\n\n\nstatus: ready', 'true: a', '1: a', 'na me: a', 'name:a', 'name : a',
      '__proto__: x', 'constructor: x', 'a.b: c', 'metadata:\n  producedBy:\n    kind: skill', 'tags:\n  - a\n  - b', '  name: a', 'name: a\n...', '%YAML 1.2\n---\nname: a',
      'name: multi\n  line', 'description: first\n  continued here', 'name: a # comment',
    ]
    for (const layout of layouts) agrees(layout)
    expect(parseSimpleYaml('name: acme\nruntime:\n  mode: persona\nmetadata:\n  primaryDocument: documents/a.md')).toEqual({
      name: 'acme',
      runtime: { mode: 'persona' },
      metadata: { primaryDocument: 'documents/a.md' },
    })
    expect(parseSimpleYaml('__proto__: x\nname: a')).toBeUndefined()
  })

  it('agrees with the YAML parser on 5,000 random documents built from those pieces', () => {
    let seed = 42
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
    const keys = ['name', 'description', 'type', 'status', 'runtime', 'mode', 'metadata', 'primaryDocument', 'producedBy', 'kind', 'x_y', 'a-b', 'true', 'Name']
    let answered = 0
    for (let n = 0; n < 5000; n++) {
      const lines: string[] = []
      const count = 1 + Math.floor(random() * 8)
      for (let i = 0; i < count; i++) {
        const indent = ' '.repeat(i === 0 ? 0 : pick([0, 0, 0, 0, 0, 2, 2, 2, 4, 1]))
        const roll = random()
        if (roll < 0.05) lines.push(`${pick(['', '  '])}# note`)
        else if (roll < 0.1) lines.push('')
        else if (roll < 0.25) lines.push(`${indent}${pick(keys)}:`)
        else lines.push(`${indent}${pick(keys)}: ${pick(VALUES)}`)
      }
      const yaml = lines.join('\n')
      if (parseSimpleYaml(yaml) !== undefined) answered++
      agrees(yaml)
    }
    expect(answered).toBeGreaterThan(100)
  })

  it('declines what only a real parser can read, so the validation table is unchanged', () => {
    expect(parseSimpleYaml('version: 1.0')).toBeUndefined() // a float in YAML
    expect(parseSimpleYaml('description: Use when: the user asks')).toBeUndefined() // the lenient retry decides
    expect(parseFrontmatterYaml('description: Use when: the user asks')).toMatchObject({ ok: true, repaired: true })
    expect(parseSimpleYaml('name: a\nname: b')).toBeUndefined()
    expect(parseFrontmatterYaml('name: a\nname: b')).toMatchObject({ ok: false })
  })
})
