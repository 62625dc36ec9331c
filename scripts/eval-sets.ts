/**
 * The evaluation sets the calibration scripts read (scripts/gate-calibration.ts,
 * scripts/gate-features.ts): their folders by short name, and the texts of a queries file.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '..')

/** Short name → folder (the dev halves in ../shared are read in place, never copied). */
export const SETS: Record<string, string> = {
  'turns-dev': resolve(ROOT, '..', 'shared', 'corpus', 'locomo', 'turns-dev'),
  'facts-dev': resolve(ROOT, '..', 'shared', 'corpus', 'locomo', 'facts-dev'),
  lme: resolve(ROOT, '..', 'shared', 'corpus', 'longmemeval', 'turns-dev'),
  'zh-agent': join(ROOT, 'bench', 'data', 'zh-agent'),
  'small-stores': join(ROOT, 'bench', 'data', 'small-stores'),
}

/** Query texts of a JSONL file of queries (none when the file is absent). */
export function queryTexts(file: string): string[] {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => (JSON.parse(line) as { text: string }).text)
}
