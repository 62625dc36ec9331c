const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0')
}

/**
 * A new knowledge id, `knowledge-YYYYMMDDhhmmss-xxxx` (UTC; xxxx from [a-z0-9]).
 * Ids are unique with high probability; the store retries on the rare clash.
 * @example
 * newKnowledgeId(new Date('2026-03-05T12:00:00Z')) // 'knowledge-20260305120000-k3x9'
 */
export function newKnowledgeId(at: Date): string {
  const stamp = `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${pad(at.getUTCSeconds())}`
  const bytes = new Uint8Array(4)
  globalThis.crypto.getRandomValues(bytes)
  let suffix = ''
  for (const byte of bytes) suffix += ALPHABET[byte % ALPHABET.length]
  return `knowledge-${stamp}-${suffix}`
}

/** Format of generated ids. */
export const GENERATED_KNOWLEDGE_ID = /^knowledge-\d{14}-[a-z0-9]{4}$/

/**
 * Ids accepted anywhere (generated ones, and ids carried in by an import such as
 * `knowledge-20260305-a1b2` or `profile_001`): 1-128 safe characters.
 */
export const KNOWLEDGE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/
