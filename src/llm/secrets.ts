/**
 * Secret detection for every text that goes to a model and every text a model writes back
 * (issue 27, finding 6). The rule set is secretlint's recommended preset
 * (`@secretlint/secretlint-rule-preset-recommend`, MIT, maintained, pure JS, offline): AWS,
 * GitHub, GitLab, Slack, npm, OpenAI, Anthropic, SendGrid, Shopify, Vault, 1Password,
 * database connection strings, basic-auth URLs, PEM private keys, GCP service-account JSON, …
 * KnowHub adds the forms that show up in conversations rather than in files, as one more
 * secretlint rule in the same run ({@link KNOWHUB_RULES}): its own `kh_…` tokens, GCP API keys,
 * Azure connection strings, `-p` passwords, JWTs, `.env` lines, cookie values, Authorization
 * headers and labelled values (`password: …`, `"api_key": "…"`).
 *
 * The preset's comment filter (`secretlint-disable`) is left out on purpose: a conversation
 * must not be able to switch detection off.
 */
import { lintSource } from '@secretlint/core'
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend'
import type { SecretLintCoreConfigRule, SecretLintRuleCreator } from '@secretlint/types'

/** What kind of secret a value is (extraction stores cookies and credentials apart). */
export type SecretKind = 'password' | 'cookie' | 'api_key' | 'token' | 'private_key'

/** One secret found in a text: its value is `text.slice(start, end)`. */
export interface SecretFinding {
  kind: SecretKind
  /** A human name for it (`AWS secret access key`, `Cookie session_id`, `password`, …). */
  label: string
  /** The rule that found it (a secretlint rule id, or `knowhub/<name>`). */
  rule: string
  value: string
  start: number
  end: number
}

/** A KnowHub rule: every match's group `v` (else the last group) is the secret. */
interface PatternRule {
  name: string
  kind: SecretKind
  /** Fixed label, or taken from group `l` of the match. */
  label?: string
  re: RegExp
  /** A further check of the value (e.g. that it looks random), with the label the match gave it. */
  accept?: (value: string, label: string) => boolean
}

/** Values that are placeholders, not secrets (markers of an earlier redaction included). */
const PLACEHOLDER =
  /^(?:\[(?:SECRET_\d+|redacted[^\]]*|secret[^\]]*)\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_][A-Za-z0-9_]*%|<[^>]*>|\*{3,}|x{3,}|\.{2,}|…|null|none|true|false|undefined|changeme|\{\{[^}]*\}\})$/iu

/**
 * At least three of lower case, upper case, digits and symbols, or 24+ characters of two with a
 * digit, or 24+ letters, 30-70% of them capitals, whose case flips at every third letter or more
 * (`kQzRmXwPbLtY…`, not `ThisIsALongIdentifier`): how a generated secret looks.
 */
function looksRandom(value: string): boolean {
  const classes = [/[a-z]/u, /[A-Z]/u, /[0-9]/u, /[^A-Za-z0-9]/u].filter((re) => re.test(value)).length
  if ((value.length >= 12 && classes >= 3) || (value.length >= 24 && classes >= 2 && /[0-9]/u.test(value))) return true
  if (value.length < 24 || !/^[A-Za-z]+$/u.test(value)) return false
  let flips = 0
  for (let i = 1; i < value.length; i++) if (/[a-z]/u.test(value[i - 1]!) !== /[a-z]/u.test(value[i]!)) flips++
  const upper = value.replace(/[a-z]/gu, '').length / value.length
  return flips >= value.length / 3 && upper >= 0.3 && upper <= 0.7
}

/** Words that follow "password is" in prose ("the password is required"), never a password themselves. */
const PROSE_WORDS = new Set(
  (
    'a about also always an and any as at bad been being blank but case-sensitive changed checked complex compromised configured correct default defined ' +
    'different disabled easy empty enabled encrypted entered expired fine for from generated given good hard hashed here hidden how identical important ' +
    'in incorrect int integer invalid it its just kept known leaked logged long longer managed mandatory masked missing my needed never no none not now ' +
    'of ok okay on only optional or our private protected provided public random rejected required reset reused rotated safe salted same saved secret ' +
    'sent set shared short shorter shown similar simple still stored str string strong supplied text that the their then there this too typed unique ' +
    'unknown unsafe unset updated used valid validated verified very visible weak what where which with wrong your yours'
  ).split(' '),
)

/** A value that is prose ("required", "in Vault"), a file path or a shell expansion (`$PATH:/usr/bin`): not a secret. */
const isProse = (value: string): boolean => PROSE_WORDS.has(value.toLowerCase().replace(/[.,:;!?)]+$/u, '')) || /^(?:\/|\.{1,2}\/|~\/|\$)/u.test(value)

/** Chinese labels of a secret (password, passphrase, key, private key, token, app authorisation code). */
const ZH_SECRET_LABEL = '密码|口令|密钥|秘钥|私钥|令牌|授权码'
/** A value after a Chinese label: printable ASCII but quotes (it ends at a space, a quote or the next Chinese character). */
const ZH_VALUE = String.raw`[!#-&(-_a-~]+`

const SECRET_NAME = String.raw`(?:[A-Za-z0-9]+[_-])*(?:api[_\s-]?key|apikey|secret(?:[_-]?key)?|access[_-]?(?:key(?:[_-]?id)?|token)|client[_-]?secret|private[_-]?key(?:[_-]?id)?|auth[_-]?token|refresh[_-]?token|id[_-]?token|session[_-]?token|token|password|passwd|passphrase|pwd|credentials?)`
// A labelled value ends at a space, a quote or a separator; a sentence's full stop (or ! ?)
// right before a space or the end is the sentence's, not the value's ("the password is hunter2.").
const VALUE = String.raw`["'\x60]?(?<v>[^\s"'\x60,;，。；]+?)(?=[.!?]?(?:\s|$)|["'\x60,;，。；])`

/** Names that make a `.env` value secret whatever it looks like. */
const SECRET_ENV_NAME = /(?:KEY|SECRET|TOKEN|PASS|PWD|PASSWORD|CREDENTIAL|AUTH|PRIVATE|DSN|DATABASE_(?:REPLICA_)?URL|SESSION|COOKIE|SALT|SIGNATURE|CERT)/iu
/** …unless the name says it holds a setting about the secret: `TOKEN_TTL=3600`, `PASSWORD_MIN_LENGTH=12`, `KEY_FILE=/…`. */
const SETTING_NAME =
  /_(?:TTL|TIMEOUT|EXPIRY|EXPIRES(?:_IN)?|LIFETIME|LENGTH|LEN|SIZE|BITS|COUNT|ROUNDS|FILE|PATH|DIR|HOST|PORT|USER|USERNAME|NAME|ID|ENABLED|MODE|HEADER|TYPE|ALGORITHM|ALG|PREFIX|FORMAT|VERSION|REGION)$/iu
const isSecretEnvName = (name: string): boolean => SECRET_ENV_NAME.test(name) && !SETTING_NAME.test(name)

/**
 * KnowHub's own rules, run beside secretlint's preset. Order does not matter: overlapping
 * findings keep the longest.
 */
export const KNOWHUB_RULES: readonly PatternRule[] = [
  // KnowHub's API tokens (src/auth/tokens.ts: kh_ + 43 base64url characters); shorter ones too.
  { name: 'knowhub-token', kind: 'token', label: 'KnowHub token', re: /(?<![A-Za-z0-9_-])(?<v>kh_[A-Za-z0-9_-]{20,})/gu },
  {
    name: 'aws-access-key-id',
    kind: 'api_key',
    label: 'AWS access key id',
    re: /\b(?<v>(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16})\b/gu,
  },
  // An AWS secret access key without its label: 40 characters of base64 that look generated.
  {
    name: 'aws-secret-access-key',
    kind: 'api_key',
    label: 'AWS secret access key',
    re: /(?<![A-Za-z0-9/+=])(?<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gu,
    accept: (v) => /[a-z]/u.test(v) && /[A-Z]/u.test(v) && /[0-9]/u.test(v),
  },
  { name: 'gcp-api-key', kind: 'api_key', label: 'Google API key', re: /\b(?<v>AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/gu },
  { name: 'gcp-oauth-secret', kind: 'api_key', label: 'Google OAuth client secret', re: /\b(?<v>GOCSPX-[0-9A-Za-z_-]{20,})/gu },
  {
    name: 'azure-connection-string',
    kind: 'api_key',
    re: /\b(?<l>AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret|Password|Pwd)\s*=\s*(?<v>[^;\s"']{4,})/giu,
  },
  { name: 'azure-sas-signature', kind: 'token', label: 'Azure SAS signature', re: /[?&]sig=(?<v>[A-Za-z0-9%+/=]{16,})/gu },
  {
    name: 'azure-ad-client-secret',
    kind: 'api_key',
    label: 'Azure AD client secret',
    re: /(?<![A-Za-z0-9_~.-])(?<v>[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/gu,
  },
  { name: 'url-password', kind: 'password', label: 'URL password', re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:(?<v>[^\s@/]+)@/giu },
  // mysql -u root -pPassw0rd, mysqldump -p'x', sshpass -p x, --password=x
  {
    name: 'cli-password-flag',
    kind: 'password',
    label: 'command-line password',
    re: /\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb(?:-dump)?|mysqlsh)\b[^\n]*?\s-p["']?(?<v>[^\s"']+)/gu,
  },
  { name: 'sshpass', kind: 'password', label: 'command-line password', re: /\bsshpass\s+-p\s*["']?(?<v>[^\s"']+)/gu },
  {
    name: 'password-option',
    kind: 'password',
    label: 'command-line password',
    re: /(?<![A-Za-z0-9-])--(?:password|passwd|pass|token|api-key|secret)[= ]["']?(?<v>[^\s"']+)/gu,
  },
  { name: 'jwt', kind: 'token', label: 'JWT', re: /\b(?<v>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)/gu },
  {
    name: 'private-key',
    kind: 'private_key',
    label: 'private key',
    re: /(?<v>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$))/gu,
  },
  {
    name: 'authorization-header',
    kind: 'token',
    re: /\b(?<l>(?:Proxy-)?Authorization)["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|Digest|Bot|ApiKey|Key|AWS4-HMAC-SHA256|Negotiate|NTLM)?\s*(?<v>[^\s"']{8,}(?: [^\s"']+=[^\s"']+)*)/giu,
  },
  { name: 'bearer', kind: 'token', label: 'Bearer token', re: /\b(?:Bearer|Basic)\s+(?<v>[A-Za-z0-9._~+/=-]{12,})/gu },
  {
    name: 'api-key-header',
    kind: 'api_key',
    re: /\b(?<l>X-(?:Api-Key|Auth-Token|Access-Token|Api-Token|Goog-Api-Key|Functions-Key))\s*:\s*(?<v>[^\s"']{8,})/giu,
  },
  { name: 'provider-key', kind: 'api_key', label: 'API key', re: /\b(?<v>(?:sk|rk|pk)[-_](?:live_|test_|proj-|ant-)?(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,})/gu },
  { name: 'github-token', kind: 'api_key', label: 'GitHub token', re: /\b(?<v>(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/gu },
  { name: 'slack-token', kind: 'api_key', label: 'Slack token', re: /\b(?<v>xox[abprs]-[A-Za-z0-9-]{10,})/gu },
  // .env lines: NAME=value where the name says secret, or the value looks generated.
  {
    name: 'dotenv',
    kind: 'password',
    re: /^[ \t]*(?:export[ \t]+)?(?<l>[A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*["']?(?<v>[^\s"'#;]{4,})/gmu,
    accept: (v, label) => !isProse(v) && (isSecretEnvName(label) || looksRandom(v)),
  },
  // Labelled values: password: x, "api_key": "x", token=x ("the password is required" is prose).
  {
    name: 'labelled-password',
    kind: 'password',
    re: new RegExp(String.raw`(?<l>\b(?:password|passwd|passcode|passphrase|pwd))["'\x60]?\s*(?:[:=：]|\bis\b|\bwas\b)\s*${VALUE}`, 'giu'),
    accept: (v) => !isProse(v),
  },
  // "the prod db password for admin is Tr0ub4dor&3", "password of the root account: x".
  {
    name: 'password-phrase',
    kind: 'password',
    label: 'password',
    re: new RegExp(
      String.raw`\b(?:password|passwd|passcode|passphrase)s?\s+(?:for|of|to|on|at|in)(?:\s+[^\s,;，。；]+){1,4}?\s*(?:\bis\b|\bwas\b|[:=：])\s*${VALUE}`,
      'giu',
    ),
    accept: (v) => !isProse(v),
  },
  // 密码是 x, 数据库密码：x, API 密钥：x: the value in ASCII (a value in Chinese is prose: 密码是必填项).
  {
    name: 'labelled-secret-zh',
    kind: 'password',
    re: new RegExp(String.raw`(?<l>${ZH_SECRET_LABEL})\s*(?:是|为|：|:|=)\s*["'\x60“]?(?<v>${ZH_VALUE})`, 'gu'),
    accept: (v) => !isProse(v) && v.length >= 4 && !/^\d+[-~–]\d+$/u.test(v),
  },
  // 我的银行卡密码 864213, 邮箱授权码 abcdefghijklmnop: no word between; a digit or a generated look needed (密码 12 位, 令牌 token 的 are prose).
  {
    name: 'adjacent-secret-zh',
    kind: 'password',
    re: new RegExp(String.raw`(?<l>${ZH_SECRET_LABEL})\s*(?<v>${ZH_VALUE})`, 'gu'),
    accept: (v, label) =>
      !isProse(v) &&
      (/^\d{4,12}$/u.test(v) || (/\d/u.test(v) && v.length >= 6 && !/^\d+[-~–]\d+$/u.test(v)) || looksRandom(v) || (label === '授权码' && v.length >= 12)),
  },
  // My debit card PIN is 4821; PIN code: 123456.
  { name: 'pin', kind: 'password', label: 'PIN', re: /\bPIN(?:\s+code)?\s*(?:\bis\b|[:=：])\s*(?<v>\d{4,12})\b/gu },
  // curl -u admin:pass, curl --user 'deploy:pass' (a $VAR or <user:password> is a placeholder).
  {
    name: 'curl-user',
    kind: 'password',
    label: 'command-line password',
    re: /\bcurl\b[^\n]*?\s(?:-u|--user)(?:[= ]\s*)?["']?(?![<$-])[^\s:"'<>]*:(?<v>[^\s"'<>]+)(?=[\s"']|$)/gu,
  },
  // redis-cli -a pass, docker login -u x -p pass
  {
    name: 'cli-password-short',
    kind: 'password',
    label: 'command-line password',
    re: /\b(?:redis-cli\b[^\n]*?\s-a|docker\s+login\b[^\n]*?\s-p)\s+["']?(?<v>[^\s"']+)/gu,
  },
  // ~/.netrc: machine api.example.com login bob password pass
  { name: 'netrc', kind: 'password', label: 'netrc password', re: /\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?<v>\S+)/gu, accept: (v) => !isProse(v) },
  // Telegram bot tokens: <bot id>:<35 characters>, also inside https://api.telegram.org/bot<token>/…
  {
    name: 'telegram-bot-token',
    kind: 'token',
    label: 'Telegram bot token',
    re: /(?:(?<=\/bot)|(?<![A-Za-z0-9_:-]))(?<v>\d{6,12}:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/gu,
  },
  // TOTP seeds: otpauth://totp/…?secret=BASE32, and "TOTP secret: JBSW Y3DP …".
  { name: 'otpauth', kind: 'token', label: 'TOTP seed', re: /\botpauth:\/\/[^\s"']*?[?&]secret=(?<v>[A-Za-z2-7]+=*)/giu },
  {
    name: 'totp-seed',
    kind: 'token',
    label: 'TOTP seed',
    re: /\b(?:totp|otp|2fa|mfa|authenticator)(?:\s+(?:secret|seed|key|setup key))\s*(?:\bis\b|[:=：])\s*(?<v>[A-Za-z2-7]{4}(?:[ -]?[A-Za-z2-7]{4}){3,})/giu,
  },
  // export PGPASSWORD=x anywhere in a line (Run: export …, PGPASSWORD=x psql, ENV TOKEN=x, $env:API_KEY="x"): a secret-named variable.
  {
    name: 'env-assignment',
    kind: 'password',
    re: /(?:^|(?<=[\s;&|(\x60"'：:]))(?:export\s+|set\s+|env\s+|ENV\s+|\$env:)?(?<l>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*["']?(?<v>[^\s"'#;&|)]{4,})/gmu,
    accept: (v, label) => isSecretEnvName(label) && !isProse(v),
  },
  {
    name: 'labelled-secret',
    kind: 'token',
    re: new RegExp(String.raw`\b(?<l>${SECRET_NAME})["'\x60]?\s*(?:[:=：]|=>|\bis\b)\s*${VALUE}`, 'giu'),
    // "the token is valid" is prose: a secret has a digit or looks generated.
    accept: (v) => v.length >= 6 && (/[0-9]/u.test(v) || looksRandom(v)),
  },
  {
    name: 'session-cookie',
    kind: 'cookie',
    re: /\b(?<l>session(?:_?id)?|sessid|sid|auth_token|csrftoken|PHPSESSID|JSESSIONID|remember_token|connect\.sid|_session)\s*=\s*(?<v>(?:(?![;"',])[\x21-\x7e]){4,})/giu,
  },
]

/** Each `name=value` value of a Cookie / Set-Cookie header (the value only: the names and the rest of the line stay). */
function cookieFindings(text: string): SecretFinding[] {
  const found: SecretFinding[] = []
  const header = /\b(?<h>Set-Cookie|Cookie)\s*[:：]\s*(?<rest>[^\n]*)/giu
  const cookieOption = /(?:^|\s)(?:-b|--cookie)\s+(?<q>["'])(?<rest>[^\n]*?)\k<q>/gu
  const scan = (rest: string, offset: number, onlyFirst: boolean): void => {
    const pair = /(?:^|;)\s*(?<name>[^=;\s]+)=(?<value>[^;\n]*)/gu
    for (const m of rest.matchAll(pair)) {
      const name = m.groups?.name ?? ''
      let value = m.groups?.value ?? ''
      const lead = value.length - value.trimStart().length
      value = value.trim().replace(/^"|"$/gu, '')
      // A cookie value is ASCII without spaces or commas (RFC 6265): prose after it ("…=abc，然后登录") is not part of it.
      const end = value.search(/[\s,]|[^\x21-\x7e]/u)
      if (end >= 0) value = value.slice(0, end)
      if (value.length >= 1 && !PLACEHOLDER.test(value)) {
        const start =
          offset + (m.index ?? 0) + m[0].length - (m.groups?.value ?? '').length + lead + ((m.groups?.value ?? '').trimStart().startsWith('"') ? 1 : 0)
        found.push({ kind: 'cookie', label: `Cookie ${name}`, rule: 'knowhub/cookie', value, start, end: start + value.length })
      }
      if (onlyFirst) break
    }
  }
  for (const m of text.matchAll(header)) {
    const rest = m.groups?.rest ?? ''
    scan(rest, (m.index ?? 0) + m[0].length - rest.length, (m.groups?.h ?? '').toLowerCase() === 'set-cookie')
  }
  for (const m of text.matchAll(cookieOption)) {
    const rest = m.groups?.rest ?? ''
    scan(rest, (m.index ?? 0) + m[0].length - rest.length - 1, false)
  }
  return found
}

/** The findings of KnowHub's pattern rules in `text`. */
function patternFindings(text: string): SecretFinding[] {
  const found: SecretFinding[] = cookieFindings(text)
  for (const rule of KNOWHUB_RULES) {
    for (const m of text.matchAll(rule.re)) {
      const value = m.groups?.v
      if (value === undefined || value === '' || PLACEHOLDER.test(value)) continue
      const label = rule.label ?? m.groups?.l ?? rule.name
      if (rule.accept && !rule.accept(value, label)) continue
      const start = (m.index ?? 0) + m[0].lastIndexOf(value)
      found.push({ kind: rule.kind, label, rule: `knowhub/${rule.name}`, value, start, end: start + value.length })
    }
  }
  return found
}

/** secretlint's message ids as labels and kinds. */
const PRESET_LABELS: Record<string, { label: string; kind: SecretKind }> = {
  AWSSecretAccessKey: { label: 'AWS secret access key', kind: 'api_key' },
  AWSAccessKeyID: { label: 'AWS access key id', kind: 'api_key' },
  AWSAccountID: { label: 'AWS account id', kind: 'api_key' },
  PrivateKeyJSON: { label: 'GCP service account key', kind: 'private_key' },
  PrivateKeyP12: { label: 'GCP service account key', kind: 'private_key' },
  BasicAuth: { label: 'URL password', kind: 'password' },
}

/** The rules handed to secretlint: the preset's scanners (not its comment filter), AWS with its id scan on. */
const PRESET_RULES: SecretLintCoreConfigRule[] = (recommended.rules as SecretLintRuleCreator[])
  .filter((rule) => rule.meta.type === 'scanner')
  .map((rule) => ({ id: rule.meta.id, rule, options: rule.meta.id.endsWith('-aws') ? { enableIDScanRule: true } : {} }))

/** A secretlint finding as a span of `text`: the value the rule reports (its data), else its range. */
function presetFinding(
  text: string,
  message: { ruleId: string; messageId: string; range: readonly [number, number]; data?: object },
): SecretFinding | undefined {
  const [from, to] = message.range
  const known = PRESET_LABELS[message.messageId]
  const kind: SecretKind =
    known?.kind ?? (/privatekey/u.test(message.ruleId) ? 'private_key' : /database|basicauth/u.test(message.ruleId) ? 'password' : 'api_key')
  const label = known?.label ?? ((message.data as { typeName?: string } | undefined)?.typeName || message.messageId)
  const values = Object.entries(message.data ?? {})
    .filter(([key, value]) => typeof value === 'string' && value.length >= 6 && key !== 'typeName' && key !== 'FILE_NAME')
    .map(([, value]) => value as string)
  for (const value of values) {
    // The reported value nearest to the reported range (some rules report a range of the wrong length).
    let at = text.indexOf(value, Math.max(0, from - value.length))
    if (at < 0) at = text.indexOf(value)
    if (at < 0) continue
    // A URL's credential: only its password, so the host and the user stay readable.
    const url = /^[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:([^\s@/]+)@/iu.exec(value)
    if (url?.[1]) {
      const p = at + url[0].length - 1 - url[1].length
      return { kind: 'password', label: 'URL password', rule: message.ruleId, value: url[1], start: p, end: p + url[1].length }
    }
    return { kind, label, rule: message.ruleId, value, start: at, end: at + value.length }
  }
  if (to <= from) return undefined
  return { kind, label, rule: message.ruleId, value: text.slice(from, to), start: from, end: to }
}

/** Longest first, then earliest; a finding overlapping a kept one is dropped. */
function withoutOverlaps(findings: SecretFinding[]): SecretFinding[] {
  const kept: SecretFinding[] = []
  const sorted = [...findings].sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start)
  for (const f of sorted) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f)
  return kept.sort((a, b) => a.start - b.start)
}

/** The findings of secretlint's preset and KnowHub's rules in `text`, overlaps and all. */
async function scan(text: string): Promise<SecretFinding[]> {
  const result = await lintSource({
    source: { content: text, filePath: 'conversation.txt', ext: '.txt', contentType: 'text' },
    options: { config: { rules: PRESET_RULES }, maskSecrets: false, noPhysicFilePath: true },
  })
  const preset = result.messages.flatMap((m) => {
    const f = presetFinding(text, m)
    return f && !PLACEHOLDER.test(f.value) ? [f] : []
  })
  return [...preset, ...patternFindings(text)]
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\', '/': '/' }

/**
 * `text` with JSON string escapes decoded, and for each decoded index its index in `text` (one
 * more at the end): prompts carry data as JSON, where a `.env` file's lines or a PEM key's are
 * one line with `\n` in it.
 */
function decodedView(text: string): { text: string; at: number[] } | undefined {
  if (!/\\[nrt"\\/u]/u.test(text)) return undefined
  let out = ''
  const at: number[] = []
  for (let i = 0; i < text.length; i++) {
    const next = text[i + 1] ?? ''
    if (text[i] === '\\' && ESCAPES[next] !== undefined) {
      at.push(i)
      out += ESCAPES[next]
      i++
    } else if (text[i] === '\\' && next === 'u' && /^[0-9a-fA-F]{4}$/u.test(text.slice(i + 2, i + 6))) {
      at.push(i)
      out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16))
      i += 5
    } else {
      at.push(i)
      out += text[i]
    }
  }
  at.push(text.length)
  return { text: out, at }
}

/**
 * Every secret in `text`, as non-overlapping spans in text order. Text holding JSON-escaped data
 * is also read decoded, and what is found there is mapped back to its escaped span.
 * @example
 * const [found] = await findSecrets('mysql -u root -pPassw0rd')
 * found.value // 'Passw0rd'
 */
export async function findSecrets(text: string): Promise<SecretFinding[]> {
  if (text.trim() === '') return []
  const view = decodedView(text)
  // In escaped text a match that takes in a quote or a backslash ran past the end of a JSON
  // string or a logical line: the decoded view finds that secret where it ends.
  const found = (await scan(text)).filter((f) => !view || !/["\\]/u.test(f.value))
  if (view) {
    for (const f of await scan(view.text)) {
      const start = view.at[f.start]!
      const end = view.at[f.end]!
      if (end > start) found.push({ ...f, value: text.slice(start, end), start, end })
    }
  }
  return withoutOverlaps(found)
}

/**
 * `text` with every secret replaced by `replacement(finding)` (default `[redacted]`), and the findings.
 * @example
 * const { text } = await redactSecrets('Authorization: Bearer eyJhbGciOi…')
 */
export async function redactSecrets(
  text: string,
  replacement: (finding: SecretFinding) => string = () => '[redacted]',
): Promise<{ text: string; found: SecretFinding[] }> {
  const found = await findSecrets(text)
  let out = ''
  let at = 0
  for (const f of found) {
    out += text.slice(at, f.start) + replacement(f)
    at = f.end
  }
  return { text: out + text.slice(at), found }
}

/**
 * Every string inside `value` (objects and arrays, at any depth) with its secrets redacted: a
 * model's structured answer before anything is stored.
 * @example
 * await redactDeep({ content: 'use kh_…' }) // { content: 'use [redacted]' }
 */
export async function redactDeep<T>(value: T): Promise<T> {
  if (typeof value === 'string') return (await redactSecrets(value)).text as T
  if (Array.isArray(value)) return (await Promise.all(value.map((v: unknown) => redactDeep(v)))) as T
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) out[key] = await redactDeep(v)
    return out as T
  }
  return value
}
