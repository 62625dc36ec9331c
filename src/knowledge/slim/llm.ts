/**
 * Slimming with an LLM: the merged text of a group of near-duplicates written by the model
 * (every distinct fact kept, repetition dropped, the language kept). Without an LLM the
 * deterministic merge of slim-merge.ts writes it.
 */
import { z } from 'zod'
import { redactSecrets, type LlmProvider } from '../../llm/index.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../prompt-data.js'

/** The model's answer: the merged content. */
export const MergedContent = z.object({ content: z.string().trim().min(1, 'content must not be empty') })

const SYSTEM = [
  'You merge near-duplicate entries of a knowledge base for AI agents into one entry.',
  'Keep every distinct fact, step, warning and example of every entry; drop only repetition. Do not add anything the entries do not say.',
  'Keep the language of the entries (Chinese stays Chinese) and keep code, commands and names exactly.',
  'The first entry leads: keep its structure and its task.',
  DATA_NOT_INSTRUCTIONS,
  'Answer with one JSON object: {"content": the merged content}.',
].join('\n')

/**
 * The merged content of `group` (lead first) written by the model; `model` overrides the task's model (the `model` of `POST /api/knowledge/slim`).
 * @example
 * const content = await llmMergedContent(llm, records, 'google/gemini-2.0-flash-001')
 */
export async function llmMergedContent(llm: LlmProvider, group: readonly KnowledgeRecord[], model?: string): Promise<string> {
  const entries = group.map((r) => ({ id: r.id, task: r.task, types: r.types, content: r.content }))
  const messages = [
    { role: 'system' as const, content: SYSTEM },
    { role: 'user' as const, content: dataBlock('The entries to merge (the first leads)', entries) },
  ]
  // Room for every entry's text, and the tokens it takes (about 2 characters a token): a small model stops there.
  const chars = group.reduce((sum, r) => sum + r.content.length, 0)
  const ask = z.object({
    content: z
      .string()
      .min(1)
      .max(chars + 200),
  })
  const maxTokens = Math.min(4000, Math.max(300, Math.round(chars / 2) + 200))
  const answer = await llm.json('slim', messages, MergedContent, { name: 'merged_entry', ask, maxTokens, ...(model ? { model } : {}) })
  // The provider redacts secrets both ways; redacting again keeps that true for any provider.
  return (await redactSecrets(answer.content)).text
}
