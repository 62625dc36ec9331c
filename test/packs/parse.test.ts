import { existsSync } from 'node:fs'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { activatePack, loadPack, parseKnowledgeMarkdown, type LoadPackResult } from '../../src/packs/index.js'
import { validateFrontmatter } from '../../src/packs/load/frontmatter.js'
import { parseFrontmatterYaml, splitFrontmatter } from '../../src/packs/load/parse.js'
import { isKnowHubError } from '../../src/core/errors.js'
import { VALIDATION, knowledge, tempDir, writeTree } from './helpers.js'

const codes = (r: LoadPackResult): string[] => (r.ok ? r.pack.issues : r.rejected.issues).map((i) => i.code)
const row = (folder: string, options: Parameters<typeof loadPack>[1] = {}): Promise<LoadPackResult> => loadPack(join(VALIDATION, folder), options)

describe('frontmatter', () => {
  it('splits frontmatter and body, accepting a BOM, CRLF and a `...` fence', () => {
    const split = splitFrontmatter('\uFEFF---\r\nname: a\r\n...\r\n\r\n# Body\r\n')
    expect(split).toEqual({ ok: true, yaml: 'name: a', body: '# Body\n', bodyLine: 4 })
  })

  it('reports an unterminated block', () => {
    const split = splitFrontmatter('---\nname: a\n# no close\n')
    expect(split.ok).toBe(false)
    if (!split.ok) expect(split.diagnostic.code).toBe('invalid_yaml')
  })

  it('uses a real YAML parser (nested maps, block scalars, quotes)', () => {
    const parsed = parseFrontmatterYaml('name: a\ndescription: >\n  folded\n  text\nruntime:\n  mode: persona\nlist: [1, "two"]')
    expect(parsed).toEqual({ ok: true, repaired: false, data: { name: 'a', description: 'folded text\n', runtime: { mode: 'persona' }, list: [1, 'two'] } })
  })

  it('retries once with colon values quoted, and says so', () => {
    const parsed = parseFrontmatterYaml('name: a\ndescription: Use when: the user asks')
    expect(parsed.ok && parsed.repaired && parsed.data.description).toBe('Use when: the user asks')
  })

  it('refuses duplicate keys, non-mappings and alias bombs', () => {
    expect(parseFrontmatterYaml('name: a\nname: b').ok).toBe(false)
    expect(parseFrontmatterYaml('- a\n- b').ok).toBe(false)
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n')
    expect(parseFrontmatterYaml(bomb).ok).toBe(false)
  })

  it('fills the KnowledgeCatalogItem fields of seed 000', () => {
    const text = knowledge(
      {
        name: 'acme',
        version: '1.2.3',
        language: 'zh-cn',
        trust: 'official',
        grounding: 'required',
        profile: 'document-first',
      },
      '# Body\n',
    ).replace(
      'profile: document-first',
      'profile: document-first\nruntime:\n  mode: persona\nmetadata:\n  primaryDocument: documents/a.md\n  producedBy:\n    kind: skill\n    name: builder\n    version: 1.0.0\n    digest: sha256:abc\n  acme:team: sales',
    )
    const parsed = parseKnowledgeMarkdown(text, { location: '/p/acme/KNOWLEDGE.md', packRoot: '/p/acme', folderName: 'acme', scope: 'user' })
    expect(parsed.outcome).toBe('loaded')
    if (parsed.outcome !== 'loaded') return
    expect(parsed.item).toMatchObject({
      name: 'acme',
      description: 'A test pack.',
      type: 'domain-reference',
      status: 'ready',
      trust: 'official',
      profile: 'document-first',
      runtime: { mode: 'persona' },
      metadata: {
        primaryDocument: 'documents/a.md',
        producedBy: { kind: 'skill', name: 'builder', version: '1.0.0', digest: 'sha256:abc' },
        'acme:team': 'sales',
      },
      version: '1.2.3',
      language: 'zh-CN',
      grounding: 'required',
      location: '/p/acme/KNOWLEDGE.md',
      packRoot: '/p/acme',
      scope: 'user',
      diagnostics: [],
    })
    expect(parsed.body).toBe('# Body\n')
  })

  it('never throws on odd field types: each becomes a diagnostic with its field', () => {
    const v = validateFrontmatter(
      {
        name: 'x',
        description: 'd',
        type: 'brand-product',
        status: 'ready',
        profile: 'sideways',
        runtime: 'persona',
        trust: 7,
        version: 'latest',
        language: 'not a tag!',
        metadata: { primaryDocument: 42, producedBy: { kind: 'robot' } },
      },
      { location: '/x/KNOWLEDGE.md', packRoot: '/x', folderName: 'x', scope: 'project' },
    )
    expect(v.outcome).toBe('loaded')
    const fields = v.issues.map((i) => i.field)
    expect(fields).toEqual(
      expect.arrayContaining(['profile', 'runtime', 'trust', 'version', 'language', 'metadata.primaryDocument', 'metadata.producedBy.kind']),
    )
    if (v.outcome === 'loaded') expect(v.item).toMatchObject({ profile: 'wiki-first', runtime: { mode: 'data' } })
  })
})

describe('validation table (seed 000), one row per test', () => {
  it('missing description → skipped', async () => {
    const r = await row('missing-description')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.rejected.outcome).toBe('skipped')
    expect(codes(r)).toContain('missing_description')
  })

  it('unparsable YAML → quarantined with a diagnostic', async () => {
    const r = await row('invalid-yaml')
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.rejected.outcome).toBe('quarantined')
    expect(r.rejected.issues[0]).toMatchObject({ severity: 'error', code: 'invalid_yaml', path: 'KNOWLEDGE.md' })
    expect(r.rejected.issues[0]?.message).toMatch(/line \d+/)
  })

  it('no frontmatter at all → quarantined', async () => {
    const r = await row('no-frontmatter')
    expect(!r.ok && r.rejected.outcome).toBe('quarantined')
    expect(codes(r)).toEqual(['missing_frontmatter'])
  })

  it('name ≠ folder → warning, still loaded', async () => {
    const r = await row('name-mismatch')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.pack.item.name).toBe('renamed-pack')
    expect(r.pack.issues).toContainEqual(expect.objectContaining({ severity: 'warning', code: 'name_mismatch', field: 'name' }))
  })

  it('unknown type → skipped', async () => {
    const r = await row('unknown-type')
    expect(!r.ok && r.rejected.outcome).toBe('skipped')
    expect(codes(r)).toContain('unknown_type')
    // The message lists what would be accepted.
    const message = r.ok ? '' : r.rejected.issues.find((i) => i.code === 'unknown_type')!.message
    expect(message).toContain('Standard types: ')
    for (const type of ['domain-reference', 'brand-product', 'content-ontology']) expect(message).toContain(type)
    expect(message).toContain('packs.allowedTypes')
  })

  it('unknown but namespaced type → loaded', async () => {
    const r = await row('namespaced-type')
    expect(r.ok && r.pack.item.type).toBe('custom:acme-playbook')
  })

  it('unknown type allowed by config → loaded', async () => {
    expect((await row('config-allowed-type')).ok).toBe(false)
    const r = await row('config-allowed-type', { allowedTypes: ['legacy-notes'] })
    expect(r.ok && r.pack.item.type).toBe('legacy-notes')
  })

  it('no profile → wiki-first with a compatibility warning', async () => {
    const r = await row('no-profile')
    expect(r.ok && r.pack.item.profile).toBe('wiki-first')
    expect(codes(r)).toContain('profile_defaulted')
  })

  it('document-first without documents/ or primary document → guide loads, gap flagged (resolver: see resolve tests)', async () => {
    const r = await row('document-first-gap')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.pack.issues).toContainEqual(expect.objectContaining({ code: 'document_first_gap', severity: 'warning' }))
    const activation = await activatePack(r.pack)
    expect(activation.content).toContain('<knowledge_pack_guide name="document-first-gap"')
    expect(activation.warnings.map((w) => w.code)).toContain('document_first_gap')
  })

  it('persona without boundary notes → loads, warned at activation', async () => {
    const r = await row('persona-no-boundaries')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(codes(r)).not.toContain('persona_boundaries_missing')
    const activation = await activatePack(r.pack)
    expect(activation.warnings.map((w) => w.code)).toContain('persona_boundaries_missing')
  })

  it('archived → loads (discovery hides it unless asked: see discover tests)', async () => {
    const r = await row('archived-pack')
    expect(r.ok && r.pack.item.status).toBe('archived')
  })

  it('disputed → needs explicit confirmation before use', async () => {
    const r = await row('disputed-pack')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    await expect(activatePack(r.pack)).rejects.toSatisfy((e: unknown) => isKnowHubError(e, 'confirmation_required'))
    await expect(activatePack(r.pack, { confirm: true })).resolves.toMatchObject({ name: 'disputed-pack' })
  })

  it('invalid status → skipped; missing status → draft with an error', async () => {
    const r = await row('invalid-status')
    expect(!r.ok && r.rejected.outcome).toBe('skipped')
    const parsed = validateFrontmatter(
      { name: 'a', description: 'd', type: 'brand-product' },
      { location: '/a/KNOWLEDGE.md', packRoot: '/a', folderName: 'a', scope: 'extra' },
    )
    expect(parsed.outcome === 'loaded' && parsed.item.status).toBe('draft')
    expect(parsed.issues).toContainEqual(expect.objectContaining({ severity: 'error', code: 'missing_status' }))
  })

  it('missing name → the folder name, with an error', async () => {
    const r = await row('missing-name')
    expect(r.ok && r.pack.item.name).toBe('missing-name')
    expect(codes(r)).toContain('missing_name')
  })

  it('a primary document with `..` or an absolute path is refused, the pack still loads', async () => {
    for (const folder of ['primary-escape', 'primary-absolute']) {
      const r = await row(folder)
      expect(r.ok).toBe(true)
      if (!r.ok) continue
      expect(r.pack.item.metadata?.primaryDocument).toBeUndefined()
      expect(r.pack.issues).toContainEqual(expect.objectContaining({ severity: 'error', code: 'path_escape', field: 'metadata.primaryDocument' }))
    }
  })

  it('a primary document symlinked out of the pack is refused', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'outside.md': 'secret',
        'pack/KNOWLEDGE.md': knowledge({ name: 'pack', profile: 'document-first' }).replace(
          'profile: document-first',
          'profile: document-first\nmetadata:\n  primaryDocument: documents/main.md',
        ),
      })
      const { mkdir, symlink } = await import('node:fs/promises')
      await mkdir(join(dir, 'pack', 'documents'))
      await symlink(join(dir, 'outside.md'), join(dir, 'pack', 'documents', 'main.md'))
      const r = await loadPack(join(dir, 'pack'))
      expect(r.ok && r.pack.item.metadata?.primaryDocument).toBeUndefined()
      expect(codes(r)).toEqual(expect.arrayContaining(['path_escape', 'document_first_gap']))
    } finally {
      await cleanup()
    }
  })

  it('an oversized KNOWLEDGE.md is not read whole', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'big/KNOWLEDGE.md': knowledge({ name: 'big' }, `# Big\n${'x'.repeat(300_000)}\nTAIL-MARKER\n`) })
      const r = await loadPack(join(dir, 'big'), { maxKnowledgeBytes: 64 * 1024 })
      expect(r.ok).toBe(true)
      if (!r.ok) return
      expect(r.pack.body.length).toBeLessThan(64 * 1024)
      expect(r.pack.body).not.toContain('TAIL-MARKER')
      expect(r.pack.issues[0]).toMatchObject({ code: 'file_too_large', severity: 'warning' })
    } finally {
      await cleanup()
    }
  })

  it('a lenient real-world style pack (underscore name, map compatibility, Chinese) loads with warnings', async () => {
    const r = await row('knowledge_notes')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.pack.item).toMatchObject({
      name: 'knowledge_notes',
      language: 'zh-CN',
      // producedBy.kind is kept as written (#16 item 13).
      metadata: { producedBy: { kind: 'agent-skill', name: 'store-knowledge-builder' } },
    })
    expect(codes(r)).toEqual(expect.arrayContaining(['invalid_name', 'invalid_field', 'profile_defaulted']))
  })
})

// Real Agent Skills folders (read in place, never copied): SKILL.md text rewritten as a KNOWLEDGE.md must validate leniently.
// ../shared sits beside the repository (as in CI); a missing corpus fails the suite instead of skipping it.
const CORPUS = fileURLToPath(new URL('../../../shared/corpus/packs', import.meta.url))
describe('real Agent Skills corpus (read in place)', () => {
  let skills: { folder: string; text: string }[] = []
  beforeAll(async () => {
    for (const group of await readdir(CORPUS, { withFileTypes: true })) {
      if (!group.isDirectory()) continue
      for (const skill of await readdir(join(CORPUS, group.name), { withFileTypes: true })) {
        const file = join(CORPUS, group.name, skill.name, 'SKILL.md')
        if (skill.isDirectory() && existsSync(file)) skills.push({ folder: skill.name, text: await readFile(file, 'utf8') })
      }
    }
  })
  afterAll(() => {
    skills = []
  })

  it('parses every SKILL.md frontmatter with the YAML parser', () => {
    expect(skills.length).toBeGreaterThanOrEqual(10)
    for (const { folder, text } of skills) {
      const split = splitFrontmatter(text)
      expect(split.ok, folder).toBe(true)
      if (split.ok) expect(parseFrontmatterYaml(split.yaml).ok, folder).toBe(true)
    }
  })

  it('as KNOWLEDGE.md (with a type and status added) every one loads, with diagnostics for the non-conforming ones', () => {
    let warned = 0
    for (const { folder, text } of skills) {
      const asKnowledge = text.replace(/^---\n/u, '---\ntype: custom:agent-skill\nstatus: draft\n')
      const parsed = parseKnowledgeMarkdown(asKnowledge, {
        location: `/c/${folder}/KNOWLEDGE.md`,
        packRoot: `/c/${folder}`,
        folderName: folder,
        scope: 'extra',
      })
      expect(parsed.outcome, folder).toBe('loaded')
      if (parsed.outcome === 'loaded' && parsed.issues.some((i) => i.severity === 'warning' && i.code !== 'profile_defaulted')) warned++
    }
    // knowledge_builder (underscore) and the map-valued `compatibility` fields are flagged.
    expect(warned).toBeGreaterThanOrEqual(2)
  })
})
