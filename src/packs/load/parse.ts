/**
 * KNOWLEDGE.md parsing (pure functions, no I/O): frontmatter split, YAML, then
 * the validation table of seed 000 (frontmatter.ts). `load.ts` adds the checks that need the filesystem (documents/,
 * primaryDocument inside the pack root).
 *
 * | Problem                              | Outcome here                                    |
 * |--------------------------------------|-------------------------------------------------|
 * | missing description                  | skipped (error)                                 |
 * | unparsable YAML                      | quarantined (error), after one lenient retry    |
 * | name ≠ folder                         | loaded, warning                                 |
 * | unknown type                         | loaded if namespaced or allowed, else skipped   |
 * | no profile                           | loaded as wiki-first, compatibility warning     |
 * | archived / disputed                  | loaded; discovery hides / activation confirms   |
 */
import { createRequire } from 'node:module'
import type * as Yaml from 'yaml'
import { validateFrontmatter, type PackContext } from './frontmatter.js'
import { formatDiagnostic, type KnowledgeCatalogItem, type PackDiagnostic } from '../schema.js'

/**
 * Largest frontmatter block parsed (characters).
 * @example
 * if (yaml.length > MAX_FRONTMATTER_CHARS) reject()
 */
export const MAX_FRONTMATTER_CHARS = 64 * 1024

/** Frontmatter and body split out of a KNOWLEDGE.md. */
export type SplitFrontmatter = { ok: true; yaml: string; body: string; bodyLine: number } | { ok: false; diagnostic: PackDiagnostic }

let yamlModule: typeof Yaml | undefined

/** The `yaml` package, loaded on the first frontmatter parsed: commands that read no pack never pay for its 70 modules. */
function yamlParser(): typeof Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml
  return yamlModule
}

/**
 * Splits `---`-fenced YAML frontmatter from the Markdown body. Accepts a BOM
 * and CRLF line ends; the closing fence may be `---` or `...`.
 * @example
 * splitFrontmatter('---\nname: a\n---\n# A\n') // { ok: true, yaml: 'name: a', body: '# A\n', bodyLine: 4 }
 */
export function splitFrontmatter(text: string): SplitFrontmatter {
  const source = text.replace(/^\uFEFF/u, '').replace(/\r\n?/gu, '\n')
  const lines = source.split('\n')
  if ((lines[0] ?? '').trimEnd() !== '---') {
    return {
      ok: false,
      diagnostic: { severity: 'error', code: 'missing_frontmatter', message: 'KNOWLEDGE.md does not start with a `---` YAML frontmatter block.' },
    }
  }
  let close = -1
  for (let i = 1; i < lines.length; i++) {
    const line = (lines[i] ?? '').trimEnd()
    if (line === '---' || line === '...') {
      close = i
      break
    }
  }
  if (close < 0) {
    return {
      ok: false,
      diagnostic: { severity: 'error', code: 'invalid_yaml', message: 'The frontmatter block is never closed with `---`.' },
    }
  }
  const yaml = lines.slice(1, close).join('\n')
  if (yaml.length > MAX_FRONTMATTER_CHARS) {
    return {
      ok: false,
      diagnostic: {
        severity: 'error',
        code: 'file_too_large',
        message: `The frontmatter is ${yaml.length} characters; the limit is ${MAX_FRONTMATTER_CHARS}.`,
      },
    }
  }
  return {
    ok: true,
    yaml,
    body: lines
      .slice(close + 1)
      .join('\n')
      .replace(/^\n+/u, ''),
    bodyLine: close + 2,
  }
}

/** Parsed YAML frontmatter. */
export type ParsedYaml = { ok: true; data: Record<string, unknown>; repaired: boolean } | { ok: false; diagnostic: PackDiagnostic }

function yamlToObject(yaml: string): { data?: unknown; error?: string } {
  const doc = yamlParser().parseDocument(yaml, { prettyErrors: true, uniqueKeys: true })
  const first = doc.errors[0]
  if (first) return { error: first.message.split('\n')[0] ?? 'invalid YAML' }
  try {
    return { data: doc.toJS({ maxAliasCount: 50 }) }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

/**
 * Quotes plain scalar values that contain `: ` (a common hand-written mistake,
 * e.g. `description: Use when: the user asks`). Other lines are unchanged.
 */
function quoteColonValues(yaml: string): string {
  return yaml
    .split('\n')
    .map((line) => {
      const match = /^(\s*[A-Za-z0-9_.-]+):\s+(.*)$/u.exec(line)
      if (!match) return line
      const [, key, value = ''] = match
      if (!/:\s/u.test(value) && !value.endsWith(':')) return line
      if (/^["'[{|>&*!#]/u.test(value)) return line
      return `${key}: ${JSON.stringify(value.trimEnd())}`
    })
    .join('\n')
}

/**
 * Parses frontmatter YAML with a real YAML parser. On failure it retries once
 * with unquoted colon values quoted (as Agent Skills clients do); a repaired
 * parse is reported so the author can fix it.
 * @example
 * parseFrontmatterYaml('name: a\ndescription: Use when: asked') // { ok: true, repaired: true, data: {…} }
 */
export function parseFrontmatterYaml(yaml: string): ParsedYaml {
  const first = yamlToObject(yaml)
  let data = first.data
  let repaired = false
  if (first.error !== undefined) {
    const retry = yamlToObject(quoteColonValues(yaml))
    if (retry.error !== undefined) {
      return { ok: false, diagnostic: { severity: 'error', code: 'invalid_yaml', message: `The frontmatter is not valid YAML: ${first.error}` } }
    }
    data = retry.data
    repaired = true
  }
  if (data === null || data === undefined) {
    return { ok: false, diagnostic: { severity: 'error', code: 'invalid_yaml', message: 'The frontmatter is empty.' } }
  }
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, diagnostic: { severity: 'error', code: 'invalid_yaml', message: 'The frontmatter is not a YAML mapping.' } }
  }
  return { ok: true, data: data as Record<string, unknown>, repaired }
}

/** Result of parsing one KNOWLEDGE.md text. */
export type ParsedKnowledge =
  | { outcome: 'loaded'; item: KnowledgeCatalogItem; body: string; frontmatter: Record<string, unknown>; issues: PackDiagnostic[] }
  | { outcome: 'skipped' | 'quarantined'; name?: string; issues: PackDiagnostic[] }

/**
 * Parses a KNOWLEDGE.md text and applies the validation table. Pure.
 * @example
 * const parsed = parseKnowledgeMarkdown(text, { location, packRoot, folderName: 'acme', scope: 'project' })
 * if (parsed.outcome === 'loaded') console.log(parsed.item.name)
 */
export function parseKnowledgeMarkdown(text: string, context: PackContext): ParsedKnowledge {
  const split = splitFrontmatter(text)
  if (!split.ok) return { outcome: 'quarantined', issues: [{ ...split.diagnostic, path: 'KNOWLEDGE.md' }] }
  const yaml = parseFrontmatterYaml(split.yaml)
  if (!yaml.ok) return { outcome: 'quarantined', issues: [{ ...yaml.diagnostic, path: 'KNOWLEDGE.md' }] }
  const validation = validateFrontmatter(yaml.data, context)
  const issues = validation.issues
  if (yaml.repaired) {
    issues.unshift({
      severity: 'warning',
      code: 'yaml_repaired',
      path: 'KNOWLEDGE.md',
      message: 'The frontmatter only parsed after quoting values that contain ": "; quote them in the file.',
    })
  }
  if (validation.outcome === 'skipped') {
    return validation.name === undefined ? { outcome: 'skipped', issues } : { outcome: 'skipped', name: validation.name, issues }
  }
  validation.item.diagnostics = issues.map(formatDiagnostic)
  return { outcome: 'loaded', item: validation.item, body: split.body, frontmatter: yaml.data, issues }
}
