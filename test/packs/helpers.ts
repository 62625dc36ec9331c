import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadPack, type LoadedPack } from '../../src/packs/index.js'

/** The committed fixture packs. */
export const FIXTURES = fileURLToPath(new URL('../fixtures/packs/', import.meta.url))
export const SCOPES = join(FIXTURES, 'scopes')
export const VALIDATION = join(FIXTURES, 'validation')
export const PROJECT_PACKS = join(SCOPES, 'project', '.agents', 'knowledge')
/** The Agent Knowledge standard's own example packs (test/fixtures/packs/standard). */
export const STANDARD = join(FIXTURES, 'standard')

/** Loads a fixture pack as a project pack, or throws with the loader's issues. */
export async function pack(root: string): Promise<LoadedPack> {
  const r = await loadPack(root, { scope: 'project' })
  if (!r.ok) throw new Error(`fixture ${root} did not load: ${JSON.stringify(r.rejected.issues)}`)
  return r.pack
}

/** A fresh temp folder (real path), removed by the returned cleanup. */
export async function tempDir(prefix = 'knowhub-packs-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** Writes a tree of files: `{ 'a/b.md': 'text' }`. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path)
    await mkdir(dirname(full), { recursive: true })
    await writeFile(full, content)
  }
}

/** A minimal valid KNOWLEDGE.md. */
export function knowledge(fields: Record<string, string | undefined>, body = '# Pack\n'): string {
  const lines = Object.entries({ description: 'A test pack.', type: 'domain-reference', status: 'ready', profile: 'wiki-first', ...fields })
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v}`)
  return `---\n${lines.join('\n')}\n---\n\n${body}`
}

/** Captures CLI output. */
export function captureIo(): { io: { out: (s: string) => void; err: (s: string) => void; interactive: boolean }; out: () => string; err: () => string } {
  const out: string[] = []
  const err: string[] = []
  return {
    io: { out: (s) => void out.push(s), err: (s) => void err.push(s), interactive: false },
    out: () => out.join('\n'),
    err: () => err.join('\n'),
  }
}
