/**
 * Agent Skills folders (`SKILL.md`, the companion standard) are not knowledge packs: a folder of
 * them validates to "no KNOWLEDGE.md". This finds them, bounded, so that `packs validate` and
 * `packs doctor` can say what the folder holds instead of only what it lacks.
 */
import { readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'

/** Folders never entered (as discovery skips them). */
const SKIPPED = new Set(['.git', 'node_modules', 'dist', 'build', 'indexes'])

/**
 * The `SKILL.md` files under `root` (relative paths, sorted), looking at most `maxDepth` folders
 * down and reading at most `maxDirs` folders; symbolic links are not followed.
 * @example
 * await findAgentSkills('/repo/skills') // ['brand-guidelines/SKILL.md', 'mcp-builder/SKILL.md']
 */
export async function findAgentSkills(root: string, options: { maxDepth?: number; maxDirs?: number } = {}): Promise<string[]> {
  const maxDepth = options.maxDepth ?? 4
  let budget = options.maxDirs ?? 500
  const found: string[] = []
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (budget-- <= 0) return
    let entries
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      if (entry.isFile() && entry.name === 'SKILL.md') found.push(relative(root, join(dir, entry.name)).split('\\').join('/'))
    }
    if (depth >= maxDepth) return
    for (const entry of entries) {
      if (entry.isDirectory() && !SKIPPED.has(entry.name)) await walk(join(dir, entry.name), depth + 1)
    }
  }
  await walk(root, 0)
  return found.sort()
}

/**
 * The sentence for a folder with Agent Skills and no knowledge pack.
 * @example
 * agentSkillsHint(['a/SKILL.md', 'b/SKILL.md']) // 'This folder holds Agent Skills (2 SKILL.md, e.g. a/SKILL.md), not knowledge packs (KNOWLEDGE.md) …'
 */
export function agentSkillsHint(skills: readonly string[]): string {
  return (
    `This folder holds Agent Skills (${skills.length} SKILL.md, e.g. ${skills[0]}), not knowledge packs (KNOWLEDGE.md). ` +
    "KnowHub loads knowledge packs; to turn a skill's reference material into one, start with knowhub packs init NAME (docs/packs.md)."
  )
}
