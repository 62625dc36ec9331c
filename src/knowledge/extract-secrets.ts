/**
 * Secrets in a conversation (passwords, cookies, API keys, tokens, private keys, credentials
 * in URLs) are found before anything reaches the model: each value is replaced by a marker
 * `[SECRET_N]`. After extraction the markers become a reference to a resource whose
 * `secure_body` holds the values (seed 003 scenarios 2-3), or `[redacted]`.
 */

/** What kind of secret a value is (it decides the resource's content type). */
export type SecretKind = 'password' | 'cookie' | 'api_key' | 'token' | 'private_key'

/** One secret found, by marker number. */
export interface FoundSecret {
  n: number
  kind: SecretKind
  /** What the conversation called it (`password`, `Cookie`, `api_key`, …). */
  label: string
  value: string
  /** Index of the message it was found in. */
  message: number
}

interface Pattern {
  kind: SecretKind
  /** Group 1 (when present) is the label kept in the text; the last group is the value. */
  re: RegExp
  label?: string
}

const VALUE = String.raw`["']?([^\s"',;，。；]+)`

// Order matters: whole headers and well-known formats first, then labelled values.
const PATTERNS: Pattern[] = [
  { kind: 'private_key', re: /()(-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)/gu, label: 'private key' },
  { kind: 'cookie', re: /\b((?:Set-)?Cookie\s*[:：]\s*)([^\n]+)/giu },
  { kind: 'password', re: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(?=@)/giu, label: 'URL password' },
  { kind: 'token', re: /\b(Bearer\s+)([A-Za-z0-9._~+/=-]{12,})/gu },
  { kind: 'api_key', re: /()\b((?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,})/gu, label: 'API key' },
  { kind: 'api_key', re: /()\b((?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/gu, label: 'GitHub token' },
  { kind: 'api_key', re: /()\b(AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|xox[abprs]-[A-Za-z0-9-]{10,})/gu, label: 'API key' },
  { kind: 'token', re: /()\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})/gu, label: 'JWT' },
  {
    kind: 'cookie',
    re: new RegExp(String.raw`\b((?:session(?:_?id)?|sessid|sid|auth_token|csrftoken|PHPSESSID|JSESSIONID|remember_token)\s*=\s*)([^;\s"']{4,})`, 'giu'),
  },
  { kind: 'password', re: new RegExp(String.raw`((?:password|passwd|passcode|pwd|密码|口令)\s*(?:[:=：]|\bis\b|是|为)\s*)${VALUE}`, 'giu') },
  {
    kind: 'token',
    re: new RegExp(
      String.raw`\b((?:api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?(?:key|token)|client[_-]?secret|token|auth[_-]?token)\s*(?:[:=：]|\bis\b)\s*)${VALUE}`,
      'giu',
    ),
  },
]

/** Markers are `[SECRET_N]`. */
export const SECRET_MARKER = /\[SECRET_(\d+)\]/gu

/** Finds secrets across texts and hands out one marker per distinct value. */
export interface SecretScanner {
  /** The text with every secret replaced by its marker. */
  redact(text: string, message: number): string
  /** Every secret found so far, by marker number. */
  readonly found: FoundSecret[]
}

/**
 * A scanner shared by the messages of one conversation (a value seen twice gets one marker).
 * @example
 * const scanner = secretScanner()
 * scanner.redact('密码: SecurePass123', 0) // '密码: [SECRET_1]'
 */
export function secretScanner(): SecretScanner {
  const found: FoundSecret[] = []
  const byValue = new Map<string, number>()
  const markerFor = (kind: SecretKind, label: string, value: string, message: number): string => {
    let n = byValue.get(value)
    if (n === undefined) {
      n = found.length + 1
      byValue.set(value, n)
      found.push({ n, kind, label, value, message })
    }
    return `[SECRET_${n}]`
  }
  return {
    found,
    redact(text, message) {
      let out = text
      for (const pattern of PATTERNS) {
        out = out.replace(pattern.re, (...args: unknown[]) => {
          const groups = args.slice(1, -2).filter((g): g is string => typeof g === 'string' || g === undefined) as Array<string | undefined>
          const prefix = groups[0] ?? ''
          const value = groups[groups.length - 1] ?? ''
          if (value === '' || /^\[SECRET_\d+\]$/u.test(value) || /^\[redacted\]$/u.test(value)) return String(args[0])
          const label = pattern.label ?? prefix.replace(/[\s:=：]+$/u, '').trim()
          return `${prefix}${markerFor(pattern.kind, label || pattern.kind, value, message)}`
        })
      }
      return out
    },
  }
}

/**
 * Replaces markers with `replacement(n)` and any known secret value (or a new secret the
 * model wrote) with `[redacted]`: nothing secret survives in the text.
 * @example
 * settleSecrets('pass [SECRET_1]', found, (n) => `[secret in resource credentials/x]`)
 */
export function settleSecrets(text: string, found: readonly FoundSecret[], replacement: (n: number) => string): string {
  let out = text.replace(SECRET_MARKER, (_m, n: string) => replacement(Number(n)))
  for (const secret of found) out = out.split(secret.value).join('[redacted]')
  const late = secretScanner()
  out = late.redact(out, -1)
  return late.found.length === 0 ? out : out.replace(SECRET_MARKER, '[redacted]')
}

/**
 * The markers a text mentions.
 * @example
 * markersIn('a [SECRET_2] b [SECRET_1]') // [2, 1]
 */
export function markersIn(text: string): number[] {
  return [...text.matchAll(SECRET_MARKER)].map((m) => Number(m[1]))
}
