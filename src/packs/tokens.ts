/**
 * Token counting with a real BPE tokenizer (gpt-tokenizer, o200k_base).
 * Special-token strings in pack text (`<|endoftext|>`) are counted as plain
 * text instead of throwing.
 */
import { countTokens as countBpe } from 'gpt-tokenizer'

const PLAIN = { disallowedSpecial: new Set<string>() }

/**
 * Number of o200k_base tokens of `text`.
 * @example
 * countTokens('hello world') // 2
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countBpe(text, PLAIN)
}
