/**
 * Token counting with a real BPE tokenizer (gpt-tokenizer, o200k_base).
 * Special-token strings in pack text (`<|endoftext|>`) are counted as plain
 * text instead of throwing.
 *
 * The tokenizer is loaded on first use, not at import: its vocabulary is 2 MB of source and
 * building its tables takes a few hundred milliseconds, which one-shot commands that count
 * nothing (`knowhub list`, `show`, `status`) should not pay.
 */
import { createRequire } from 'node:module'
import type * as GptTokenizer from 'gpt-tokenizer'

type Tokenizer = typeof GptTokenizer

let loaded: Tokenizer | undefined

/** gpt-tokenizer's default encoding (o200k_base), loaded once on first use. */
export function tokenizer(): Tokenizer {
  loaded ??= createRequire(import.meta.url)('gpt-tokenizer') as Tokenizer
  return loaded
}

/** Options that count special-token strings as plain text. */
export const PLAIN_TEXT = { disallowedSpecial: new Set<string>() }

/**
 * Number of o200k_base tokens of `text`.
 * @example
 * countTokens('hello world') // 2
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : tokenizer().countTokens(text, PLAIN_TEXT)
}
