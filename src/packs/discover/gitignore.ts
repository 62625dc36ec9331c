/**
 * A small `.gitignore` matcher for discovery: enough of the format to skip
 * ignored folders (comments, `!` negation, `/` anchoring, trailing `/`,
 * `*`, `?`, `**`, character classes). Last matching rule wins.
 */

/** One compiled rule, relative to the folder of its .gitignore. */
export interface GitignoreRule {
  /** Absolute folder of the .gitignore, with a trailing separator-free form. */
  base: string
  regex: RegExp
  negate: boolean
  dirOnly: boolean
}

function globToRegex(glob: string): string {
  let out = ''
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] ?? ''
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/'
        const atEnd = i + 2 === glob.length || glob[i + 2] === '/'
        if (atStart && atEnd) {
          if (glob[i + 2] === '/') {
            out += '(?:.*/)?'
            i += 2
          } else {
            out += '.*'
            i += 1
          }
          continue
        }
      }
      out += '[^/]*'
    } else if (ch === '?') {
      out += '[^/]'
    } else if (ch === '[') {
      const close = glob.indexOf(']', i + 1)
      if (close < 0) {
        out += '\\['
      } else {
        let body = glob.slice(i + 1, close).replace(/\\/gu, '\\\\')
        if (body.startsWith('!')) body = `^${body.slice(1)}`
        out += `[${body}]`
        i = close
      }
    } else if (ch === '\\' && i + 1 < glob.length) {
      out += (glob[i + 1] ?? '').replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&')
      i += 1
    } else {
      out += ch.replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&')
    }
  }
  return out
}

/**
 * Compiles the text of one .gitignore found in `base`.
 * @example
 * const rules = parseGitignore('drafts/\n!keep/\n', '/repo/.agents/knowledge')
 * isIgnored(rules, '/repo/.agents/knowledge/drafts', true) // true
 */
export function parseGitignore(text: string, base: string): GitignoreRule[] {
  const rules: GitignoreRule[] = []
  for (const rawLine of text.split(/\r?\n/u)) {
    let line = rawLine.replace(/(?<!\\)\s+$/u, '')
    if (line === '' || line.startsWith('#')) continue
    let negate = false
    if (line.startsWith('!')) {
      negate = true
      line = line.slice(1)
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
      line = line.slice(1)
    }
    let dirOnly = false
    if (line.endsWith('/')) {
      dirOnly = true
      line = line.slice(0, -1)
    }
    if (line === '') continue
    const anchored = line.includes('/')
    if (line.startsWith('/')) line = line.slice(1)
    const body = globToRegex(line)
    const regex = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`, 'u')
    rules.push({ base: base.replace(/[\\/]+$/u, ''), regex, negate, dirOnly })
  }
  return rules
}

/**
 * True when the last rule matching `absPath` ignores it. Rules only apply
 * below their own folder.
 * @example
 * isIgnored(parseGitignore('*.tmp', '/r'), '/r/a/b.tmp', false) // true
 */
export function isIgnored(rules: readonly GitignoreRule[], absPath: string, isDir: boolean): boolean {
  const path = absPath.replace(/\\/gu, '/')
  let ignored = false
  for (const rule of rules) {
    const base = rule.base.replace(/\\/gu, '/')
    if (!path.startsWith(`${base}/`)) continue
    if (rule.dirOnly && !isDir) continue
    const rel = path.slice(base.length + 1)
    if (rule.regex.test(rel)) ignored = !rule.negate
  }
  return ignored
}
