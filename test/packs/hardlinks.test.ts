import { link, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { activatePack, loadPack, readPackFile, resolveContext } from '../../src/packs/index.js'
import { knowledge, writeTree } from './helpers.js'

const SECRET = 'root:x:0:0:SECRET-OUTSIDE-THE-PACK:/root:/bin/bash'

/**
 * A temp folder where hard links work: the system temp folder, else one under the home
 * folder, else one beside this test. Never skips: a machine where none works fails.
 */
async function hardlinkDir(): Promise<string> {
  const tried: string[] = []
  for (const base of [tmpdir(), homedir(), join(process.cwd(), '.test-tmp')]) {
    let dir: string | undefined
    try {
      await mkdir(base, { recursive: true })
      dir = await realpath(await mkdtemp(join(base, 'knowhub-hardlink-')))
      await writeFile(join(dir, 'probe'), 'x')
      await link(join(dir, 'probe'), join(dir, 'probe-link'))
      await rm(join(dir, 'probe-link'))
      return dir
    } catch (error) {
      tried.push(`${base}: ${(error as Error).message}`)
      if (dir) await rm(dir, { recursive: true, force: true })
    }
  }
  throw new Error(`no folder here accepts hard links: ${tried.join('; ')}`)
}

describe('hard links in a pack (#15 item 6)', () => {
  let dir: string
  let packRoot: string

  beforeAll(async () => {
    dir = await hardlinkDir()
    packRoot = join(dir, 'pack')
    // The secret lives outside the pack, like /etc/passwd.
    await writeFile(join(dir, 'passwd'), `${SECRET}\n`)
    await writeTree(packRoot, {
      'KNOWLEDGE.md': knowledge({ name: 'linked', description: 'Server accounts and the admin password policy.' }, '# Accounts\n'),
      'compiled/policy.md': '# Admin password policy\n\nThe admin password policy requires 16 characters.\n',
      'wiki/original.md': '# Inside original\n\nThe admin password rotates every 90 days.\n',
    })
    await link(join(dir, 'passwd'), join(packRoot, 'compiled', 'accounts.md'))
    // A file linked twice inside the pack only: allowed.
    await link(join(packRoot, 'wiki', 'original.md'), join(packRoot, 'wiki', 'copy.md'))
  })

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('the setup is what it claims: the pack file is the outside file', async () => {
    expect(await readFile(join(packRoot, 'compiled', 'accounts.md'), 'utf8')).toContain(SECRET)
  })

  it('a hard link to a file outside the pack is never read into context, a guide or a resource read', async () => {
    const r = await loadPack(packRoot)
    if (!r.ok) throw new Error(JSON.stringify(r))
    const result = await resolveContext({ task: 'root accounts admin password SECRET-OUTSIDE-THE-PACK bash', packs: [r.pack], budget: 4000 })
    expect(result.context).not.toContain('SECRET-OUTSIDE-THE-PACK')
    expect(result.context).toContain('requires 16 characters')
    const guide = (await activatePack(r.pack)).content
    expect(guide).not.toContain('SECRET-OUTSIDE-THE-PACK')
    await expect(readPackFile(r.pack, 'compiled/accounts.md')).rejects.toMatchObject({ code: 'forbidden' })
    await expect(readPackFile(r.pack, 'compiled/accounts.md')).rejects.toThrow(/hard link/)
  })

  it('a file whose every link lies inside the pack is read', async () => {
    const r = await loadPack(packRoot)
    if (!r.ok) throw new Error(JSON.stringify(r))
    expect((await readPackFile(r.pack, 'wiki/copy.md')).text).toContain('rotates every 90 days')
    expect((await readPackFile(r.pack, 'wiki/original.md')).text).toContain('rotates every 90 days')
  })

  it('a KNOWLEDGE.md hard-linked to a file outside is refused with a path_escape diagnostic', async () => {
    const other = join(dir, 'other-pack')
    await mkdir(other, { recursive: true })
    await writeFile(join(dir, 'outside-knowledge.md'), knowledge({ name: 'other-pack' }, `# Other\n\n${SECRET}\n`))
    await link(join(dir, 'outside-knowledge.md'), join(other, 'KNOWLEDGE.md'))
    const r = await loadPack(other)
    expect(r.ok).toBe(false)
    expect(JSON.stringify(r)).toContain('path_escape')
    expect(JSON.stringify(r)).not.toContain('SECRET-OUTSIDE-THE-PACK')
  })
})
