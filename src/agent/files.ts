/**
 * The agent's folder on disk (`<home>/<agent>/`): where its files are, reading them with a
 * size limit, keeping every named path inside the folder, and atomic writes.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, open, realpath, rename, rm, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { KnowHubError } from '../core/errors.js'

/** Largest knowledge, template or memory file read by default (bytes). */
export const DEFAULT_MAX_FILE_BYTES = 1_048_576

/** The fixed file names in an agent's folder. */
export const AGENT_FILES = {
  knowledge: 'knowledge.md',
  selfAwareness: 'self_awareness.md',
  template: 'system_prompt.md',
  compact: 'compact.md',
  compactHistory: 'compact_history',
  functionIndex: 'knowledge_function_index.json',
} as const

/**
 * The agent home: `home` with a leading `~` expanded, else `~/.agent`.
 * @example
 * agentHome('~/agents') // '/home/me/agents'
 */
export function agentHome(home: string | undefined): string {
  if (home === undefined || home === '~') return home === '~' ? homedir() : join(homedir(), '.agent')
  if (home.startsWith('~/')) return join(homedir(), home.slice(2))
  return resolve(home)
}

/** Whether `path` is `root` or inside it. */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

/**
 * The absolute path of `name` inside `root`: refused (`validation_error`) when it is
 * absolute, holds a NUL, climbs out with `..`, or leads out through a symbolic link.
 * @example
 * await pathInside('/home/me/.agent/book', 'skills/style.md') // '/home/me/.agent/book/skills/style.md'
 */
export async function pathInside(root: string, name: string): Promise<string> {
  const refuse = (why: string) =>
    new KnowHubError('validation_error', `Knowledge file "${name}" is refused: ${why}`, { issues: [{ path: ['knowledgeFiles'], message: why }], file: name })
  if (name.includes('\0')) throw refuse('it contains a NUL character')
  if (isAbsolute(name) || /^[A-Za-z]:[\\/]/u.test(name)) throw refuse('give a path relative to the agent folder')
  const path = resolve(root, name)
  if (!inside(root, path)) throw refuse('it leads outside the agent folder')
  const real = await realpath(path).catch(() => undefined)
  const realRoot = await realpath(root).catch(() => root)
  if (real !== undefined && !inside(realRoot, real)) throw refuse('it links outside the agent folder')
  return path
}

/**
 * A text file's content, or undefined when it does not exist. A file over `maxBytes` is
 * refused with `too_large` (nothing of it is read); a folder with `validation_error`.
 * @example
 * const knowledge = await readTextFile('/home/me/.agent/book/knowledge.md', 1_048_576)
 */
export async function readTextFile(path: string, maxBytes: number): Promise<string | undefined> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new KnowHubError('validation_error', `Cannot read ${path}: ${error.message}`, { path })
  })
  if (info === undefined) return undefined
  if (!info.isFile()) throw new KnowHubError('validation_error', `${path} is not a file`, { path })
  if (info.size > maxBytes) {
    throw new KnowHubError('too_large', `${path} is ${info.size} bytes; the limit is ${maxBytes} bytes (agent.maxFileBytes)`, {
      path,
      bytes: info.size,
      limit: maxBytes,
    })
  }
  const handle = await open(path, 'r')
  try {
    // Read at most the limit even if the file grew after stat.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    if (bytesRead > maxBytes)
      throw new KnowHubError('too_large', `${path} is over the limit of ${maxBytes} bytes (agent.maxFileBytes)`, { path, limit: maxBytes })
    return buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/u, '')
  } finally {
    await handle.close()
  }
}

/**
 * Writes a file atomically: a temporary file beside it, then a rename (readers see the old
 * or the new content, never a part). Creates the folder.
 * @example
 * await writeFileAtomic('/home/me/.agent/book/compact.md', summary)
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true })
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    await writeFile(temp, content, { encoding: 'utf8', mode: 0o600 })
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true })
    throw new KnowHubError('internal_error', `Cannot write ${path}: ${(error as Error).message}`, { path }, { cause: error })
  }
}
