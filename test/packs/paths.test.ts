import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { normalisePackPath, readBounded, resolvePackPath } from '../../src/packs/files/paths.js'
import { tempDir } from './helpers.js'

describe('pack paths', () => {
  it('accepts pack-relative paths and normalises them', () => {
    expect(normalisePackPath('documents/a.md')).toEqual({ ok: true, path: 'documents/a.md' })
    expect(normalisePackPath('./documents//a.md')).toEqual({ ok: true, path: 'documents/a.md' })
    expect(normalisePackPath('wiki\\page.md')).toEqual({ ok: true, path: 'wiki/page.md' })
  })

  it('refuses .., absolute, drive, UNC, URL, NUL and empty paths', () => {
    for (const bad of [
      '../x',
      'documents/../../x',
      'a/..',
      '/etc/passwd',
      'C:\\x',
      'c:/x',
      '\\\\server\\share',
      'file:///etc/passwd',
      'https://x.y/z',
      'a\0b',
      '',
      '  ',
      '.',
    ]) {
      expect(normalisePackPath(bad).ok, JSON.stringify(bad)).toBe(false)
    }
  })

  it('refuses symlinks that leave the pack root, also through a folder link or a dangling link', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const root = join(dir, 'pack')
      await mkdir(join(root, 'documents'), { recursive: true })
      await writeFile(join(dir, 'secret.md'), 'secret')
      await writeFile(join(root, 'documents', 'in.md'), 'in')
      await symlink(join(dir, 'secret.md'), join(root, 'documents', 'out.md'))
      await symlink(dir, join(root, 'up'))
      await symlink(join(dir, 'nothing-yet.md'), join(root, 'documents', 'later.md'))
      await symlink(join(root, 'documents', 'in.md'), join(root, 'documents', 'alias.md'))
      expect(await resolvePackPath(root, 'documents/in.md')).toMatchObject({ ok: true, exists: true })
      expect(await resolvePackPath(root, 'documents/alias.md')).toMatchObject({ ok: true, exists: true })
      expect(await resolvePackPath(root, 'documents/missing.md')).toMatchObject({ ok: true, exists: false })
      for (const escaping of ['documents/out.md', 'up/secret.md', 'up/pack/../secret.md', 'up/not-there.md']) {
        const r = await resolvePackPath(root, escaping)
        expect(r.ok, escaping).toBe(false)
        if (!r.ok) expect(r.diagnostic.code).toBe('path_escape')
      }
      // A dangling link to outside the root is refused even though its target does not exist.
      const dangling = await resolvePackPath(root, 'documents/later.md')
      expect(dangling.ok && dangling.exists).toBe(false)
    } finally {
      await cleanup()
    }
  })

  it('reads files bounded, never splitting a UTF-8 character', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const file = join(dir, 'zh.md')
      await writeFile(file, '知识'.repeat(1000))
      for (const max of [1, 2, 3, 4, 5, 100, 101]) {
        const read = await readBounded(file, max)
        expect(read.truncated).toBe(true)
        expect(read.text).not.toContain('\uFFFD')
        expect(Buffer.byteLength(read.text)).toBeLessThanOrEqual(max)
        expect(Buffer.byteLength(read.text)).toBeGreaterThan(max - 3)
      }
      const whole = await readBounded(file, 1 << 20)
      expect(whole).toMatchObject({ truncated: false, size: 6000 })
      expect(whole.hash).toMatch(/^sha256:[0-9a-f]{64}$/)
      await expect(readBounded(dir)).rejects.toMatchObject({ code: 'ENOTREG' })
    } finally {
      await cleanup()
    }
  })
})
