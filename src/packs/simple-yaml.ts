/**
 * A fast path for the frontmatter most KNOWLEDGE.md files have: `key: value`
 * lines, and keys whose value is a block of more deeply indented `key: value`
 * lines (nested mappings). Discovery parses a thousand of these at start-up, and a full YAML
 * parser spends most of a cold catalog build compiling itself. Anything
 * outside this subset — quotes with escapes, lists, flow collections,
 * comments after values, anchors, tags, multi-line scalars, values that YAML
 * would read as a number, boolean or null, duplicate keys, unusual characters
 * — returns `undefined`, and the real YAML parser decides. Where it answers,
 * it answers what the YAML 1.2 core schema gives (tested against the `yaml`
 * package).
 */

// Keys: plain words; never a null or boolean spelling (YAML would type them).
const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/u
const TYPED_KEY = /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|y|Y|n|N|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$/u
// Plain scalars YAML 1.2 core reads as null, boolean, integer or float (and 1.1-looking ones, to stay safe).
const TYPED_VALUE =
  /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N|[-+]?[0-9][0-9_]*|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|<<|=)$/u
// A plain scalar may not start with an indicator or a space.
const PLAIN_START = /^[^\s\-?:,[\]{}#&*!|>'"%@`]/u
// Characters this fast path leaves to the real parser: controls other than line feed (tab too), DEL, C1, BOM, line/paragraph separators, lone surrogates, non-characters.
// eslint-disable-next-line no-control-regex
const UNUSUAL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u2028\u2029\uFEFF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u

/** A `value` in `key: value`, or undefined when only a real parser can tell. */
function scalar(raw: string): string | undefined {
  // YAML separates with spaces (and tabs, left to the parser): not with other Unicode spaces.
  const value = raw.replace(/ +$/u, '')
  if (value === '') return undefined
  if (value.startsWith("'")) {
    // 'single quoted': '' is the only escape.
    if (value.length < 2 || !value.endsWith("'")) return undefined
    const inner = value.slice(1, -1)
    if (inner.replace(/''/gu, '').includes("'")) return undefined
    return inner.replace(/''/gu, "'")
  }
  if (value.startsWith('"')) {
    // "double quoted" without escapes.
    if (value.length < 2 || !value.endsWith('"')) return undefined
    const inner = value.slice(1, -1)
    if (/["\\]/u.test(inner)) return undefined
    return inner
  }
  if (!PLAIN_START.test(value)) return undefined
  if (/:\s|:$|\s#/u.test(value)) return undefined
  if (TYPED_VALUE.test(value)) return undefined
  return value
}

/**
 * Parses the simple frontmatter subset, or returns `undefined` for anything else.
 * @example
 * parseSimpleYaml('name: acme\nruntime:\n  mode: data') // { name: 'acme', runtime: { mode: 'data' } }
 * parseSimpleYaml('tags: [a, b]')                     // undefined: the YAML parser decides
 */
export function parseSimpleYaml(yaml: string): Record<string, unknown> | undefined {
  if (UNUSUAL.test(yaml)) return undefined
  const data: Record<string, unknown> = {}
  // Open block mappings, innermost last, each with the indentation of its keys.
  const stack: { indent: number; map: Record<string, unknown> }[] = [{ indent: 0, map: data }]
  // A key with an empty value: its block must follow, indented deeper.
  let opened: Record<string, unknown> | undefined
  for (const line of yaml.split('\n')) {
    if (/^ *$/u.test(line)) continue
    const indent = (/^ */u.exec(line)?.[0] ?? '').length
    const text = line.slice(indent)
    if (text.startsWith('#')) {
      // Comment lines only at the left margin (elsewhere layouts get subtle).
      if (indent !== 0) return undefined
      continue
    }
    const colon = text.indexOf(':')
    if (colon <= 0) return undefined
    const key = text.slice(0, colon)
    if (!KEY.test(key) || TYPED_KEY.test(key) || key === '__proto__') return undefined
    const rest = text.slice(colon + 1)
    if (rest !== '' && !rest.startsWith(' ')) return undefined
    let top = stack[stack.length - 1] as { indent: number; map: Record<string, unknown> }
    if (opened) {
      // An empty value followed by a line that is not deeper is null in YAML: leave it to the parser.
      if (indent <= top.indent) return undefined
      top = { indent, map: opened }
      stack.push(top)
      opened = undefined
    } else {
      while (stack.length > 1 && indent < top.indent) {
        stack.pop()
        top = stack[stack.length - 1] as { indent: number; map: Record<string, unknown> }
      }
      if (indent !== top.indent) return undefined
    }
    if (Object.hasOwn(top.map, key)) return undefined
    if (/^ *$/u.test(rest)) {
      opened = {}
      top.map[key] = opened
      continue
    }
    const value = scalar(rest.replace(/^ +/u, ''))
    if (value === undefined) return undefined
    top.map[key] = value
  }
  if (opened) return undefined
  return Object.keys(data).length > 0 ? data : undefined
}
