/**
 * Splits Markdown into heading sections (ATX headings outside fenced code),
 * with oversized sections cut at paragraph boundaries, so the resolver can
 * pick the relevant parts of a document instead of the whole file.
 */

/** One heading section (or part of one) of a Markdown file. */
export interface MarkdownSection {
  /** Heading text of the section ('' for text before the first heading). */
  heading: string
  /** Headings from the top level down to this one. */
  headingPath: string[]
  level: number
  /** The section text, heading line included (for parts after the first: without it). */
  text: string
  /** 1-based line of the section start in the file. */
  line: number
  /** 0 for a whole section; 1, 2, … for the parts of a section cut for size. */
  part: number
}

/**
 * Default largest section text in characters before it is cut into parts.
 * @example
 * splitMarkdown(text, { maxChars: DEFAULT_MAX_SECTION_CHARS * 2 })
 */
export const DEFAULT_MAX_SECTION_CHARS = 6000

const FENCE = /^\s{0,3}(`{3,}|~{3,})/u
const HEADING = /^\s{0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$/u

/**
 * Splits Markdown by ATX headings. Leading YAML frontmatter is dropped;
 * headings inside fenced code blocks do not count. Sections longer than
 * `maxChars` are cut into parts at blank lines (or at line ends, or hard).
 * @example
 * splitMarkdown('# A\nx\n## B\ny\n').map((s) => s.headingPath.join(' > ')) // ['A', 'A > B']
 */
export function splitMarkdown(text: string, options: { maxChars?: number } = {}): MarkdownSection[] {
  const maxChars = Math.max(200, options.maxChars ?? DEFAULT_MAX_SECTION_CHARS)
  let source = text.replace(/^\uFEFF/u, '').replace(/\r\n?/gu, '\n')
  let lineOffset = 0
  if (source.startsWith('---\n')) {
    const end = source.indexOf('\n---', 4)
    if (end >= 0) {
      const after = source.indexOf('\n', end + 4)
      const cut = after < 0 ? source.length : after + 1
      lineOffset = source.slice(0, cut).split('\n').length - 1
      source = source.slice(cut)
    }
  }
  const lines = source.split('\n')
  const sections: { heading: string; headingPath: string[]; level: number; lines: string[]; line: number }[] = []
  const stack: { level: number; heading: string }[] = []
  let current: (typeof sections)[number] = { heading: '', headingPath: [], level: 0, lines: [], line: 1 + lineOffset }
  let fence: string | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    const fenceMatch = FENCE.exec(line)
    if (fenceMatch) {
      const marker = fenceMatch[1] ?? ''
      if (fence === undefined) fence = marker[0]?.repeat(marker.length)
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
    }
    const heading = fence === undefined && !fenceMatch ? HEADING.exec(line) : null
    if (heading) {
      if (hasContent(current)) sections.push(current)
      const level = (heading[1] ?? '#').length
      const title = (heading[2] ?? '').trim()
      while (stack.length > 0 && (stack[stack.length - 1]?.level ?? 0) >= level) stack.pop()
      stack.push({ level, heading: title })
      current = { heading: title, headingPath: stack.map((s) => s.heading), level, lines: [line], line: i + 1 + lineOffset }
    } else {
      current.lines.push(line)
    }
  }
  if (hasContent(current)) sections.push(current)

  const out: MarkdownSection[] = []
  for (const section of sections) {
    const body = section.lines.join('\n').replace(/\s+$/u, '')
    if (body.length <= maxChars) {
      out.push({ heading: section.heading, headingPath: section.headingPath, level: section.level, text: body, line: section.line, part: 0 })
      continue
    }
    let part = 1
    for (const chunk of cutText(body, maxChars)) {
      out.push({ heading: section.heading, headingPath: section.headingPath, level: section.level, text: chunk, line: section.line, part: part++ })
    }
  }
  return out
}

/** A section with only its heading line carries nothing its children do not repeat in their heading path. */
function hasContent(section: { level: number; lines: string[] }): boolean {
  const body = section.level === 0 ? section.lines : section.lines.slice(1)
  return body.some((l) => l.trim() !== '')
}

/** Cuts text into chunks ≤ maxChars, preferring blank lines, then line ends, then hard cuts. */
function cutText(text: string, maxChars: number): string[] {
  const chunks: string[] = []
  let rest = text
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars)
    let cut = window.lastIndexOf('\n\n')
    if (cut < maxChars / 3) cut = window.lastIndexOf('\n')
    if (cut < maxChars / 3) cut = maxChars
    // Never split a surrogate pair.
    const code = rest.charCodeAt(cut - 1)
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1
    chunks.push(rest.slice(0, cut).replace(/\s+$/u, ''))
    rest = rest.slice(cut).replace(/^\s+/u, '')
  }
  if (rest.trim() !== '') chunks.push(rest)
  return chunks
}
