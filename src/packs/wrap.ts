/**
 * Wrapping pack knowledge as data (seed 000 Step 6, seed 001): every piece of
 * pack text the model sees sits inside `<knowledge_pack …>` with a
 * data-not-instructions preamble; the neutraliser (core/wrap.ts) keeps pack
 * text from opening, closing or forging one of our wrapper tags.
 */
import { WRAPPER_PREAMBLES, escapeXml, neutralise, preambleLanguage } from '../core/wrap.js'
import type { KnowledgeCatalogItem, PackProfile, PackStatus, RuntimeMode } from './schema.js'

/** Attributes of one `<knowledge_pack>` wrapper. */
export interface WrapperAttributes {
  name: string
  status: PackStatus
  grounding: string
  profile: PackProfile
  runtime_mode: RuntimeMode
  language?: string
}

/**
 * Wraps already-selected pack text as data: `<knowledge_pack name status
 * grounding profile runtime_mode>`, the preamble in the pack's language, the
 * neutralised content, and the closing tag.
 * @example
 * wrapKnowledge({ name: 'acme', status: 'ready', grounding: 'required', profile: 'document-first', runtime_mode: 'data' }, 'Price: 10 €')
 */
export function wrapKnowledge(attributes: WrapperAttributes, content: string): string {
  const language = preambleLanguage(attributes.language)
  const preamble = WRAPPER_PREAMBLES[language][attributes.runtime_mode === 'persona' ? 'persona' : 'data']
  const open =
    `<knowledge_pack name="${escapeXml(attributes.name)}" status="${escapeXml(attributes.status)}"` +
    ` grounding="${escapeXml(attributes.grounding)}" profile="${escapeXml(attributes.profile)}"` +
    ` runtime_mode="${escapeXml(attributes.runtime_mode)}">`
  const body = neutralise(content).replace(/\s+$/u, '')
  return `${open}\n${preamble}\n\n${body}\n</knowledge_pack>`
}

/**
 * Wrapper attributes for a catalog item under a grounding policy.
 * @example
 * wrapKnowledge(wrapperAttributes(pack.item, 'required'), selectedText)
 */
export function wrapperAttributes(item: KnowledgeCatalogItem, grounding: string): WrapperAttributes {
  return {
    name: item.name,
    status: item.status,
    grounding,
    profile: item.profile ?? 'wiki-first',
    runtime_mode: item.runtime?.mode ?? 'data',
    ...(item.language ? { language: item.language } : {}),
  }
}

/**
 * Orders wrappers persona first, then data, keeping the given order within each.
 * @example
 * orderWrappers([{ mode: 'data', text: a }, { mode: 'persona', text: b }]) // persona b, then data a
 */
export function orderWrappers<T extends { mode: RuntimeMode }>(wrappers: readonly T[]): T[] {
  return [...wrappers.filter((w) => w.mode === 'persona'), ...wrappers.filter((w) => w.mode !== 'persona')]
}
