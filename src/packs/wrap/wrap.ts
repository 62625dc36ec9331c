/**
 * Wrapping pack knowledge as data (seed 000 Step 6, seed 001): every piece of
 * pack text the model sees sits inside `<knowledge_pack …>` with a
 * data-not-instructions preamble; the neutraliser (core/wrap.ts) keeps pack
 * text from opening, closing or forging one of our wrapper tags.
 */
import { WRAPPER_PREAMBLES, escapeField, neutralise, preambleLanguage } from '../../core/wrap.js'
import type { KnowledgeCatalogItem, PackProfile, PackStatus, PackTrust, RuntimeMode } from '../schema.js'

/** Attributes of one `<knowledge_pack>` wrapper (runtime standard Step 5: name, status, trust, grounding, profile, mode, selected paths, warnings). */
export interface WrapperAttributes {
  name: string
  status: PackStatus
  /** The pack's trust (missing: unreviewed). */
  trust?: PackTrust
  grounding: string
  profile: PackProfile
  runtime_mode: RuntimeMode
  language?: string
  /** The pack-relative paths the content was selected from. */
  selected_files?: readonly string[]
  /** Codes of the warnings that apply to this content (stale, disputed, unreviewed claims…). */
  warnings?: readonly string[]
}

/**
 * Wraps already-selected pack text as data: `<knowledge_pack name status
 * trust grounding mode profile runtime_mode selected_files warnings>`, the
 * preamble in the pack's language, the neutralised content, and the closing
 * tag. `mode` is the spelling of seed 001 and the specification page,
 * `runtime_mode` the one of seed 000: both are written. Grounding `off` is
 * written as the standard's `none`.
 * @example
 * wrapKnowledge({ name: 'acme', status: 'ready', grounding: 'required', profile: 'document-first', runtime_mode: 'data' }, 'Price: 10 €')
 */
export function wrapKnowledge(attributes: WrapperAttributes, content: string): string {
  const language = preambleLanguage(attributes.language)
  const preamble = WRAPPER_PREAMBLES[language][attributes.runtime_mode === 'persona' ? 'persona' : 'data']
  const attr = (key: string, value: string): string => ` ${key}="${escapeField(value)}"`
  const grounding = attributes.grounding === 'off' ? 'none' : attributes.grounding
  const open =
    `<knowledge_pack${attr('name', attributes.name)}${attr('status', attributes.status)}${attr('trust', attributes.trust ?? 'unreviewed')}` +
    `${attr('grounding', grounding)}${attr('mode', attributes.runtime_mode)}${attr('profile', attributes.profile)}` +
    `${attr('runtime_mode', attributes.runtime_mode)}` +
    (attributes.selected_files && attributes.selected_files.length > 0 ? attr('selected_files', attributes.selected_files.join(',')) : '') +
    (attributes.warnings && attributes.warnings.length > 0 ? attr('warnings', [...new Set(attributes.warnings)].join(',')) : '') +
    '>'
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
    trust: item.trust ?? 'unreviewed',
    grounding: grounding === 'off' ? 'none' : grounding,
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
