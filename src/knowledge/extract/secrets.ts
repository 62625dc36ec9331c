/**
 * Secrets in a conversation are found before anything reaches the model (the detector of
 * src/llm/secrets.ts: secretlint's recommended rules and KnowHub's own): each value is replaced
 * by a marker `[SECRET_N]`, a value seen again anywhere in the conversation by the same marker.
 * After extraction the markers become a reference to a resource whose `secure_body` holds the
 * values (seed 003 scenarios 2-3), or `[redacted]`.
 */

import { findSecrets, type SecretKind } from '../../llm/index.js'

export type { SecretKind } from '../../llm/index.js'

/** One secret found, by marker number. */
export interface FoundSecret {
  n: number
  kind: SecretKind
  /** What the conversation called it (`password`, `Cookie session_id`, `AWS secret access key`, …). */
  label: string
  value: string
  /** Index of the message it was found in. */
  message: number
}

/** Markers are `[SECRET_N]`. */
export const SECRET_MARKER = /\[SECRET_(\d+)\]/gu

/** Finds secrets across texts and hands out one marker per distinct value. */
export interface SecretScanner {
  /** The text with every secret replaced by its marker. */
  redact(text: string, message: number): Promise<string>
  /** The text with every value found so far replaced by its marker (a second pass over earlier messages). */
  known(text: string): string
  /** Every secret found so far, by marker number. */
  readonly found: FoundSecret[]
}

/**
 * A scanner shared by the messages of one conversation (a value seen twice gets one marker).
 * @example
 * const scanner = secretScanner()
 * await scanner.redact('密码: SecurePass123', 0) // '密码: [SECRET_1]'
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
    async redact(text, message) {
      let out = ''
      let at = 0
      for (const f of await findSecrets(text)) {
        out += text.slice(at, f.start) + markerFor(f.kind, f.label, f.value, message)
        at = f.end
      }
      return this.known(out + text.slice(at))
    },
    known(text) {
      // A value found anywhere stands unlabelled here too: same marker (longest first).
      let out = text
      for (const secret of [...found].sort((a, b) => b.value.length - a.value.length)) {
        if (secret.value.length >= 6) out = out.split(secret.value).join(`[SECRET_${secret.n}]`)
      }
      return out
    },
  }
}

/**
 * Replaces markers with `replacement(n)` and any known secret value (or a new secret the
 * model wrote) with `[redacted]`: nothing secret survives in the text.
 * @example
 * await settleSecrets('pass [SECRET_1]', found, (n) => `[secret in resource credentials/x]`)
 */
export async function settleSecrets(text: string, found: readonly FoundSecret[], replacement: (n: number) => string): Promise<string> {
  let out = text
  for (const secret of found) out = out.split(secret.value).join('[redacted]')
  const late = await findSecrets(out)
  let settled = ''
  let at = 0
  for (const f of late) {
    settled += out.slice(at, f.start) + '[redacted]'
    at = f.end
  }
  settled += out.slice(at)
  return settled.replace(SECRET_MARKER, (_m, n: string) => replacement(Number(n)))
}

/**
 * The markers a text mentions.
 * @example
 * markersIn('a [SECRET_2] b [SECRET_1]') // [2, 1]
 */
export function markersIn(text: string): number[] {
  return [...text.matchAll(SECRET_MARKER)].map((m) => Number(m[1]))
}
