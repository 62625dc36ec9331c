/**
 * The system-prompt template (seed 004: a template with placeholders, not a knowledge
 * file). Placeholders are `{{name}}`; a part whose placeholder the template lacks is
 * appended at the end, so nothing mandatory is lost to a short user template. An unknown
 * placeholder is an error that names it.
 */
import { KnowHubError } from '../core/errors.js'

/**
 * The placeholders a template may use.
 * @example
 * PLACEHOLDERS.includes('function_index_path') // true
 */
export const PLACEHOLDERS = ['agent', 'self_awareness', 'knowledge', 'knowhub_knowledge', 'knowledge_packs', 'function_index_path', 'task'] as const
export type Placeholder = (typeof PLACEHOLDERS)[number]

/** Parts appended at the end when the template has no place for them (the rest are labels). */
const APPENDED: readonly Placeholder[] = ['self_awareness', 'knowledge', 'knowhub_knowledge', 'knowledge_packs', 'task']

const PATTERN = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/gu

/**
 * Checks a template: every placeholder must be a known one (`validation_error` naming the others).
 * @example
 * checkTemplate('Hello {{agent}}', 'system_prompt.md') // ok
 * checkTemplate('{{nope}}', 'system_prompt.md')          // throws validation_error
 */
export function checkTemplate(template: string, path: string): void {
  const unknown = [...template.matchAll(PATTERN)].map((m) => m[1] as string).filter((name) => !(PLACEHOLDERS as readonly string[]).includes(name))
  if (unknown.length > 0) {
    throw new KnowHubError(
      'validation_error',
      `The template ${path} uses unknown placeholders: ${[...new Set(unknown)].join(', ')} (known: ${PLACEHOLDERS.join(', ')})`,
      {
        path,
        unknown,
        issues: unknown.map((name) => ({ path: ['template'], message: `unknown placeholder {{${name}}}` })),
      },
    )
  }
}

/**
 * Fills a template: each placeholder gets its value; content parts (self-awareness,
 * knowledge, KnowHub knowledge, packs, task) whose placeholder is absent are appended.
 * Values are inserted as they are (a value's own `{{…}}` is never expanded).
 * @example
 * renderTemplate('Hi {{agent}}', { agent: 'book', task: 'Write' }) // 'Hi book\n\nWrite'
 */
export function renderTemplate(template: string, values: Partial<Record<Placeholder, string>>): string {
  const used = new Set<string>()
  const filled = template.replace(PATTERN, (_, name: string) => {
    used.add(name)
    return values[name as Placeholder] ?? ''
  })
  const appended = APPENDED.filter((name) => !used.has(name) && (values[name] ?? '') !== '').map((name) => values[name] as string)
  return [filled.trim(), ...appended].join('\n\n')
}
