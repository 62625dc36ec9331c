/**
 * The knowledge function index (seed 004): every `@name` a knowledge file declares, with
 * its kind (contract or soft), file, line and a one-line summary. Generated at start,
 * written to `knowledge_function_index.json`, never put in the prompt: the agent reads it
 * when it needs a function.
 *
 * The rule, kept lenient on purpose:
 * - A function is declared by a line, or a Markdown heading, whose text starts with `@name`
 *   (`@learning: …`, `## @批量创建智能体`, `- @review`). The name runs to the first space,
 *   colon, bracket or punctuation mark. `@` inside a sentence or an e-mail address does not declare.
 * - Its text runs from there to the next declaration, or to the next heading of the same or a
 *   higher level when it was declared by a heading.
 * - It is a contract when that text says "contract" or "契约" (any case), else soft.
 * - The summary is the rest of the declaring line, else its first non-empty line, cut to 160 characters.
 * - The first declaration of a name wins; later ones are listed under `duplicates`.
 */
import type { FunctionEntry, FunctionIndex } from '../core/agent.js'

/** A declaration: optional heading marks or a list bullet, then `@name`. */
const DECLARATION = /^\s{0,3}(#{1,6}\s+|[-*+]\s+)?@([^\s:：,，.。;；()（）[\]【】"'`<>]+)(.*)$/u
const HEADING = /^\s{0,3}(#{1,6})\s/u
const CONTRACT = /contract|契约/iu
const SUMMARY_MAX = 160

/** A knowledge file to index: its path (as written in the index) and text. */
export interface IndexSource {
  path: string
  text: string
}

interface Declaration {
  name: string
  line: number
  /** Heading level of the declaration (0: not a heading). */
  level: number
  rest: string
}

function declarationOf(line: string, index: number): Declaration | undefined {
  const match = DECLARATION.exec(line)
  if (!match) return undefined
  const marks = match[1] ?? ''
  const level = marks.startsWith('#') ? marks.trim().length : 0
  return { name: match[2] as string, line: index + 1, level, rest: (match[3] ?? '').replace(/^\s*[:：-]?\s*/u, '').trim() }
}

function headingLevel(line: string): number {
  return HEADING.exec(line)?.[1]?.length ?? 0
}

function cut(text: string): string {
  const clean = text.replace(/\s+/gu, ' ').trim()
  return clean.length > SUMMARY_MAX ? `${clean.slice(0, SUMMARY_MAX - 1)}…` : clean
}

/**
 * The functions one file declares, in order.
 * @example
 * findFunctions({ path: 'knowledge.md', text: '## @learning\nContract: read, then save.' })
 * // [{ name: 'learning', func_type: 'contract', path: 'knowledge.md', line: 1, summary: 'Contract: read, then save.' }]
 */
export function findFunctions(source: IndexSource): FunctionEntry[] {
  const lines = source.text.split(/\r?\n/u)
  const found: FunctionEntry[] = []
  let fence = false
  const declarations: Array<Declaration | undefined> = lines.map((line, i) => {
    if (/^\s{0,3}(```|~~~)/u.test(line)) fence = !fence
    return fence ? undefined : declarationOf(line, i)
  })
  declarations.forEach((declaration, i) => {
    if (!declaration) return
    let end = i + 1
    while (end < lines.length && !declarations[end]) {
      const level = headingLevel(lines[end] as string)
      if (declaration.level > 0 && level > 0 && level <= declaration.level) break
      end++
    }
    const body = lines.slice(i, end).join('\n')
    const firstLine = lines.slice(i + 1, end).find((l) => l.trim() !== '' && headingLevel(l) === 0) ?? ''
    found.push({
      name: declaration.name,
      func_type: CONTRACT.test(body) ? 'contract' : 'soft',
      path: source.path,
      line: declaration.line,
      summary: cut(declaration.rest !== '' ? declaration.rest : firstLine.replace(/^\s*[-*+>]\s*/u, '')),
    })
  })
  return found
}

/**
 * The index of an agent's knowledge files: functions by name, first declaration first.
 * @example
 * const index = buildFunctionIndex('book_agent', sources, new Date())
 * index.functions.learning?.func_type // 'contract'
 */
export function buildFunctionIndex(agent: string, sources: readonly IndexSource[], at: Date): FunctionIndex {
  // No prototype: a function may be called `__proto__`.
  const functions = Object.create(null) as Record<string, FunctionEntry>
  const duplicates: FunctionEntry[] = []
  for (const source of sources) {
    for (const entry of findFunctions(source)) {
      if (Object.hasOwn(functions, entry.name)) duplicates.push(entry)
      else functions[entry.name] = entry
    }
  }
  return { version: 1, agent, generated_at: at.toISOString(), files: sources.map((s) => s.path), functions, duplicates }
}
