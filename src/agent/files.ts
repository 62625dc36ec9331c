/**
 * A local agent's folder on disk (`<home>/<agent>/`): where its files are, reading them with a
 * size limit, and atomic writes. Links never lead out of it: the folder itself, every folder
 * on the way to a file and the file must be real (no symbolic link), and a file must have one
 * name only (a hard link, `nlink > 1`, may be another file's name outside the folder). Each is
 * refused with a `validation_error` that names it. A read never creates a file or a folder.
 */
import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, mkdir, open, realpath, rename, rm } from 'node:fs/promises'
import type { Stats } from 'node:fs'
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

/** The `validation_error` of a link (or another refused entry) under an agent folder. */
function linkRefused(what: string, why: string, path: string): KnowHubError {
  return new KnowHubError('validation_error', `${what} is refused: ${why} (links never lead out of an agent folder)`, {
    issues: [{ path: ['agent'], message: why }],
    path,
  })
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
 * An agent's folder, `<home>/<agent>`: undefined when it does not exist (nothing is created);
 * refused when it is a symbolic link, not a folder, or resolves outside the home.
 * @example
 * const dir = await agentFolder('/home/me/.agent', 'book_agent') // '/home/me/.agent/book_agent' or undefined
 */
export async function agentFolder(home: string, agent: string): Promise<string | undefined> {
  const dir = join(home, agent)
  const info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new KnowHubError('validation_error', `Cannot read the agent folder "${agent}": ${error.code ?? error.message}`, { path: dir })
  })
  if (info === undefined) return undefined
  if (info.isSymbolicLink()) throw linkRefused(`The agent folder "${agent}"`, 'it is a symbolic link', dir)
  if (!info.isDirectory()) throw linkRefused(`The agent folder "${agent}"`, 'it is not a folder', dir)
  const [realDir, realHome] = await Promise.all([realpath(dir), realpath(home)])
  if (realDir !== join(realHome, agent)) throw linkRefused(`The agent folder "${agent}"`, 'it resolves outside the agent home', dir)
  return dir
}

/** lstat, or undefined when the entry does not exist. */
async function lstatOrAbsent(path: string): Promise<Stats | undefined> {
  return lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new KnowHubError('validation_error', `Cannot read ${path}: ${error.code ?? error.message}`, { path })
  })
}

/** Refuses a regular file with more than one name (a hard link). */
function refuseHardLink(info: Pick<Stats, 'nlink'>, name: string, path: string): void {
  if (info.nlink > 1) {
    throw linkRefused(`"${name}"`, `it has ${info.nlink} hard links, so it may be a file outside the agent folder; copy the file instead`, path)
  }
}

/**
 * A file of an agent's folder (`name` relative to `dir`), or undefined when it does not exist.
 * Every folder on the way and the file itself are checked with lstat: a symbolic link or a
 * hard link is refused (`validation_error`); the file is then opened without following a link
 * and checked again (same file, one name). Over `maxBytes`: `too_large`, nothing read.
 * @example
 * const knowledge = await readAgentFile('/home/me/.agent/book', 'knowledge.md', 1_048_576)
 */
export async function readAgentFile(dir: string, name: string, maxBytes: number): Promise<string | undefined> {
  const segments = name.split(/[\\/]/u).filter((s) => s !== '' && s !== '.')
  let path = dir
  for (const [i, segment] of segments.entries()) {
    path = join(path, segment)
    const info = await lstatOrAbsent(path)
    if (info === undefined) return undefined
    const shown = segments.slice(0, i + 1).join('/')
    if (info.isSymbolicLink()) throw linkRefused(`"${shown}"`, 'it is a symbolic link', path)
    const last = i === segments.length - 1
    if (!last && !info.isDirectory()) return undefined
    if (last) {
      if (!info.isFile()) throw new KnowHubError('validation_error', `"${shown}" is not a file`, { path })
      refuseHardLink(info, shown, path)
    }
  }
  return readFileLimited(path, name, maxBytes, { noFollow: true })
}

/**
 * A text file's content, or undefined when it does not exist. A file over `maxBytes` is
 * refused with `too_large` (nothing of it is read); a folder with `validation_error`. For files
 * outside agent folders (the shipped defaults, a template the local user names).
 * @example
 * const template = await readTextFile('/srv/agent-defaults/en/system_prompt.md', 1_048_576)
 */
export async function readTextFile(path: string, maxBytes: number): Promise<string | undefined> {
  return readFileLimited(path, path, maxBytes, { noFollow: false })
}

async function readFileLimited(path: string, shown: string, maxBytes: number, options: { noFollow: boolean }): Promise<string | undefined> {
  const flags = constants.O_RDONLY | (options.noFollow ? constants.O_NOFOLLOW : 0)
  const handle = await open(path, flags).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    if (error.code === 'ELOOP') throw linkRefused(`"${shown}"`, 'it is a symbolic link', path)
    if (error.code === 'EISDIR') throw new KnowHubError('validation_error', `${shown} is not a file`, { path })
    throw new KnowHubError('validation_error', `Cannot read ${shown}: ${error.code ?? error.message}`, { path })
  })
  if (handle === undefined) return undefined
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new KnowHubError('validation_error', `${shown} is not a file`, { path })
    // Checked again on the open file: it may have been swapped for a link since the lstat.
    if (options.noFollow) refuseHardLink(info, shown, path)
    if (info.size > maxBytes) {
      throw new KnowHubError('too_large', `${shown} is ${info.size} bytes; the limit is ${maxBytes} bytes (agent.maxFileBytes)`, {
        path,
        bytes: info.size,
        limit: maxBytes,
      })
    }
    // Read at most the limit even if the file grew after stat.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    if (bytesRead > maxBytes)
      throw new KnowHubError('too_large', `${shown} is over the limit of ${maxBytes} bytes (agent.maxFileBytes)`, { path, limit: maxBytes })
    return buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/u, '')
  } finally {
    await handle.close()
  }
}

/**
 * Writes a file of an agent's folder atomically: a new temporary file beside it (never
 * through an existing name or link), then a rename over the name (readers see the old or the
 * new content, never a part; a link at the name is replaced, never written through). The
 * agent folder must exist and be real ({@link agentFolder}); `create` makes the folders from
 * the home down, each checked, for writes (compaction) — never for a read.
 * @example
 * await writeAgentFile('/home/me/.agent', 'book', 'compact.md', summary, { create: true })
 */
export async function writeAgentFile(home: string, agent: string, name: string, content: string, options: { create?: boolean } = {}): Promise<string> {
  let dir = await agentFolder(home, agent)
  if (dir === undefined) {
    if (!options.create) throw new KnowHubError('not_found', `The agent folder "${agent}" does not exist`, { agent })
    await mkdir(join(home, agent), { recursive: true, mode: 0o700 })
    dir = await agentFolder(home, agent)
    if (dir === undefined) throw new KnowHubError('internal_error', `Cannot create the agent folder "${agent}"`, { agent })
  }
  const segments = name.split('/')
  let parent = dir
  for (const [i, segment] of segments.slice(0, -1).entries()) {
    parent = join(parent, segment)
    const info = await lstatOrAbsent(parent)
    if (info === undefined) {
      if (!options.create) throw new KnowHubError('not_found', `"${segment}" does not exist in the agent folder "${agent}"`, { agent })
      await mkdir(parent, { mode: 0o700 })
    } else if (info.isSymbolicLink() || !info.isDirectory()) {
      const shown = `"${segments.slice(0, i + 1).join('/')}"`
      throw linkRefused(shown, info.isSymbolicLink() ? 'it is a symbolic link' : 'it is not a folder', parent)
    }
  }
  const path = join(parent, segments[segments.length - 1] as string)
  await writeFileAtomic(path, content)
  return path
}

/**
 * Writes a file atomically: a new temporary file beside it (created exclusively, so never
 * through an existing link), then a rename. The folder must exist.
 * @example
 * await writeFileAtomic('/home/me/.agent/book/compact.md', summary)
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
    try {
      await handle.writeFile(content, 'utf8')
    } finally {
      await handle.close()
    }
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true })
    throw new KnowHubError('internal_error', `Cannot write ${path}: ${(error as Error).message}`, { path }, { cause: error })
  }
}
