/**
 * An in-memory lexical index of one pack's text files (compiled/, documents/,
 * wiki/, sources/): heading sections with BM25 postings, built once and
 * reused until a file changes. This is what keeps resolving a 50 MB pack fast.
 */
import { noopLogger, type Logger } from '../../core/logger.js'
import { bm25, PACK_BM25 } from '../../core/text/index.js'
import { mapLimit } from '../files/limit.js'
import { loadEvidence, type PackEvidence } from '../evidence/evidence.js'
import { hasLayers, loadLayers, type LayerGraph } from '../layers/load.js'
import { documentTerms, type WeightedTerm } from './lexical.js'
import { z } from 'zod'
import { DEFAULT_MAX_FILE_BYTES, normalisePackPath, readBounded, resolvePackPath, type BoundedRead } from '../files/paths.js'
import { listPackResources, type ListResourcesOptions, type PackResource, type ResourceKind, type ResourceListing } from '../files/resources.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'
import { DEFAULT_MAX_SECTION_CHARS, splitMarkdown } from './sections.js'

/** One indexed section. */
export interface IndexedSection {
  id: number
  path: string
  kind: ResourceKind
  heading: string
  headingPath: string[]
  line: number
  part: number
  /** Position of the section within its file. */
  order: number
  text: string
  /** Number of terms (BM25 document length). */
  length: number
  /** Position of its file in lime's split manifest (`compiled/index.json`), when listed there: reading order of splits. */
  manifestOrder?: number
  /**
   * A task subgraph of the v0.7 layers (ontology/, answers/), built for one
   * resolve and never stored in the index: its id is not an index id, its
   * tokens are never memoised; its anchors, warnings and file hash travel with it.
   */
  layer?: { anchors: string[]; warnings: { severity: 'info' | 'warning' | 'error'; path: string; code: string; message: string }[]; fileHash: string }
}

/** One indexed file. */
export interface IndexedFile {
  path: string
  kind: ResourceKind
  size: number
  mtimeMs: number
  hash: string
  truncated: boolean
  sectionIds: number[]
}

/** Options of {@link PackIndex.build}. */
export interface PackIndexOptions {
  /** Largest file read whole; larger files are indexed up to this size, with a warning. */
  maxFileBytes?: number
  maxSectionChars?: number
  listing?: ListResourcesOptions
  concurrency?: number
  logger?: Logger
}

const SPLIT_MANIFEST = 'compiled/index.json'
/** Records a client writes into a pack (`runs/context-*.json`). */
const CLIENT_RECORD = /^runs\/context-[^/]*\.json$/u

/** One split of lime's manifest, as the resolver uses it. */
export interface SplitManifestEntry {
  order: number
  title?: string
  tokenEstimate?: number
  sourceDocument?: string
}

const ManifestEntry = z
  .object({
    relativePath: z.string().min(1),
    title: z.string().optional(),
    tokenEstimate: z.number().optional(),
    sourceDocument: z.string().optional(),
  })
  .passthrough()

/**
 * Reads `compiled/index.json` (an array of splits, or an object whose `splits`,
 * `entries` or `items` is one): each split's path (pack-relative, or relative
 * to compiled/), title, token estimate, in manifest order. Bad entries are
 * diagnostics; the rest are used.
 */
async function readSplitManifest(pack: LoadedPack, issues: PackDiagnostic[]): Promise<Map<string, SplitManifestEntry>> {
  const manifest = new Map<string, SplitManifestEntry>()
  const resolved = await resolvePackPath(pack.realRoot, SPLIT_MANIFEST)
  if (!resolved.ok) return manifest
  let data: unknown
  try {
    data = JSON.parse((await readBounded(resolved.absPath, 4 * 2 ** 20, pack.realRoot)).text)
  } catch (error) {
    issues.push({
      severity: 'warning',
      code: 'source_map_invalid',
      path: SPLIT_MANIFEST,
      message: `${SPLIT_MANIFEST} is not readable JSON (${(error as Error).message}).`,
    })
    return manifest
  }
  const record = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined
  const list = Array.isArray(data) ? data : (record?.splits ?? record?.entries ?? record?.items)
  if (!Array.isArray(list)) {
    issues.push({ severity: 'warning', code: 'source_map_invalid', path: SPLIT_MANIFEST, message: `${SPLIT_MANIFEST} lists no splits.` })
    return manifest
  }
  list.forEach((raw, i) => {
    const parsed = ManifestEntry.safeParse(raw)
    const path = parsed.success
      ? normalisePackPath(parsed.data.relativePath.startsWith('compiled/') ? parsed.data.relativePath : `compiled/${parsed.data.relativePath}`)
      : undefined
    if (!parsed.success || !path?.ok) {
      issues.push({
        severity: 'warning',
        code: 'source_map_invalid',
        path: SPLIT_MANIFEST,
        field: `${i}`,
        message: `Split ${i} of ${SPLIT_MANIFEST} is invalid; ignored.`,
      })
      return
    }
    const { title, tokenEstimate, sourceDocument } = parsed.data
    manifest.set(path.path, {
      order: i,
      ...(title ? { title } : {}),
      ...(tokenEstimate === undefined ? {} : { tokenEstimate }),
      ...(sourceDocument ? { sourceDocument } : {}),
    })
  })
  return manifest
}

const TEXT_FILE = /\.(?:md|markdown|mdx|txt)$/iu
const INDEXED_KINDS: ReadonlySet<ResourceKind> = new Set(['runtime', 'primary', 'document', 'wiki', 'source'])
const HEADING_BOOST = 3

/**
 * The index of one pack. Create with {@link PackIndex.build}; no I/O in the constructor.
 * @example
 * const index = await PackIndex.build(pack)
 * const scores = index.score(queryTerms('enterprise price'), (s) => s.kind === 'runtime')
 */
export class PackIndex {
  readonly sections: IndexedSection[] = []
  readonly files = new Map<string, IndexedFile>()
  readonly issues: PackDiagnostic[] = []
  /** Vectors of sections by embedder model, filled lazily by the resolver. */
  readonly vectors = new Map<string, Map<number, Float32Array>>()
  private readonly postings = new Map<string, number[]>()
  private totalLength = 0

  /** lime's split manifest (`compiled/index.json`) by split path: order, title, token estimate. */
  manifest = new Map<string, SplitManifestEntry>()

  /** The pack's v0.7 layers (ontology/, answers/), when it has any. */
  layers: LayerGraph | undefined

  /** Bytes of text indexed (each file's size, up to the read limit): what the cache weighs. */
  bytes = 0

  private constructor(
    readonly pack: LoadedPack,
    readonly listing: ResourceListing,
    readonly evidence: PackEvidence,
    readonly builtAt: number,
    private readonly listingOptions: ListResourcesOptions | undefined,
  ) {}

  /**
   * Lists, reads (bounded) and indexes a pack's text files, and loads its evidence.
   * @example
   * const index = await PackIndex.build(pack, { maxFileBytes: 8 * 1024 * 1024 })
   */
  static async build(pack: LoadedPack, options: PackIndexOptions = {}): Promise<PackIndex> {
    const logger = options.logger ?? noopLogger
    const started = performance.now()
    const listing = await listPackResources(pack, options.listing)
    const evidence = await loadEvidence(pack, listing.resources)
    const index = new PackIndex(pack, listing, evidence, Date.now(), options.listing)
    index.issues.push(...listing.issues, ...evidence.issues)
    if (listing.resources.some((r) => r.path === SPLIT_MANIFEST)) index.manifest = await readSplitManifest(pack, index.issues)
    if (hasLayers(pack, listing.resources)) {
      index.layers = await loadLayers(pack, listing.resources)
      index.issues.push(...index.layers.issues)
    }
    const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES
    const maxChars = options.maxSectionChars ?? DEFAULT_MAX_SECTION_CHARS
    const textFiles = listing.resources.filter((r) => INDEXED_KINDS.has(r.kind) && TEXT_FILE.test(r.path))
    const reads = await mapLimit(textFiles, options.concurrency ?? 16, async (resource) => {
      const resolved = await resolvePackPath(pack.realRoot, resource.path)
      if (!resolved.ok) {
        index.issues.push(resolved.diagnostic)
        return undefined
      }
      try {
        return { resource, read: await readBounded(resolved.absPath, maxBytes, pack.realRoot) }
      } catch (error) {
        index.issues.push({
          severity: 'warning',
          code: 'unreadable',
          path: resource.path,
          message: `${resource.path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
        })
        return undefined
      }
    })
    for (const entry of reads) {
      if (!entry) continue
      const { resource, read } = entry
      if (read.truncated) {
        index.issues.push({
          severity: 'warning',
          code: 'file_too_large',
          path: resource.path,
          message: `${resource.path} is ${read.size} bytes; only the first ${maxBytes} bytes are used.`,
        })
      }
      index.bytes += Math.min(read.size, maxBytes)
      index.addFile(resource, read, maxChars)
    }
    logger.debug('packs.index.built', {
      pack: pack.item.name,
      files: index.files.size,
      sections: index.sections.length,
      ms: Math.round(performance.now() - started),
    })
    return index
  }

  /** Splits one read file into sections and adds them, with their BM25 postings, to the index. */
  private addFile(resource: PackResource, read: BoundedRead, maxChars: number): void {
    const file: IndexedFile = {
      path: resource.path,
      kind: resource.kind,
      size: read.size,
      mtimeMs: read.mtimeMs,
      hash: read.hash,
      truncated: read.truncated,
      sectionIds: [],
    }
    const fileTerms = documentTerms(resource.path.replace(/[/_.-]+/gu, ' '))
    const sections = splitMarkdown(read.text, { maxChars })
    const listed = this.manifest.get(resource.path)
    for (let order = 0; order < sections.length; order++) {
      const section = sections[order]
      if (!section) continue
      // A split without a heading takes its title from the manifest.
      if (listed?.title && section.headingPath.length === 0) {
        section.heading = listed.title
        section.headingPath = [listed.title]
      }
      const id = this.sections.length
      const terms = documentTerms(section.text)
      const headingTerms = documentTerms(section.headingPath.join(' '))
      const counts = new Map<string, number>()
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
      for (const term of headingTerms) counts.set(term, (counts.get(term) ?? 0) + HEADING_BOOST)
      for (const term of fileTerms) counts.set(term, (counts.get(term) ?? 0) + 1)
      for (const [term, tf] of counts) {
        let list = this.postings.get(term)
        if (!list) this.postings.set(term, (list = []))
        list.push(id, tf)
      }
      const length = terms.length + headingTerms.length * HEADING_BOOST + fileTerms.length
      this.totalLength += length
      this.sections.push({
        id,
        path: resource.path,
        kind: resource.kind,
        heading: section.heading,
        headingPath: section.headingPath,
        line: section.line,
        part: section.part,
        order,
        text: section.text,
        length,
        ...(listed ? { manifestOrder: listed.order } : {}),
      })
      file.sectionIds.push(id)
    }
    this.files.set(resource.path, file)
  }

  /** Token counts of rendered sections, filled by the resolver (sections never change while indexed). */
  readonly tokenCounts = new Map<number, number>()
  /** Characters and tokens of every section counted so far: this pack's characters-per-token ratio. */
  readonly tokenRatio = { chars: 0, tokens: 0 }

  /**
   * The share (0…1) of the task's concept weight each section covers, for the
   * sections that cover any (a concept is covered when the section has one
   * of its terms).
   * @example
   * index.conceptCoverage(taskConcepts(queryTerms('Team plan cost'))).get(sectionId) // 1
   */
  conceptCoverage(concepts: readonly { terms: readonly string[]; weight: number }[]): Map<number, number> {
    const total = concepts.reduce((sum, c) => sum + c.weight, 0)
    const coverage = new Map<number, number>()
    if (total === 0) return coverage
    for (const concept of concepts) {
      const ids = new Set<number>()
      for (const term of concept.terms) {
        const list = this.postings.get(term)
        if (list) for (let i = 0; i < list.length; i += 2) ids.add(list[i] as number)
      }
      for (const id of ids) coverage.set(id, (coverage.get(id) ?? 0) + concept.weight / total)
    }
    return coverage
  }

  /** Number of sections containing the term. */
  documentFrequency(term: string): number {
    return (this.postings.get(term)?.length ?? 0) / 2
  }

  /**
   * BM25 scores (core's one scorer, {@link PACK_BM25}) of the sections accepted by `accept` that contain any query term.
   * @example
   * index.score(queryTerms('price'), (s) => s.path.startsWith('compiled/'))
   */
  score(terms: readonly WeightedTerm[], accept: (section: IndexedSection) => boolean): Map<number, number> {
    const scores = new Map<number, number>()
    const scorer = bm25(PACK_BM25, this.sections.length, this.totalLength)
    const accepted = new Map<number, boolean>()
    for (const { term, weight } of terms) {
      const list = this.postings.get(term)
      if (!list) continue
      const idf = scorer.idf(list.length / 2)
      for (let i = 0; i < list.length; i += 2) {
        const id = list[i] as number
        let ok = accepted.get(id)
        if (ok === undefined) {
          const section = this.sections[id]
          ok = section !== undefined && accept(section)
          accepted.set(id, ok)
        }
        if (!ok) continue
        const length = this.sections[id]?.length ?? scorer.avgLength
        scores.set(id, (scores.get(id) ?? 0) + weight * scorer.score(idf, list[i + 1] as number, length))
      }
    }
    return scores
  }

  /**
   * Files whose size or mtime changed since indexing, plus files added or
   * removed: one listing of the pack (a readdir per folder, an lstat per file),
   * no file read.
   * @example
   * if ((await index.changedFiles()).length > 0) cache.invalidate(pack)
   */
  async changedFiles(): Promise<string[]> {
    const changed: string[] = []
    const now = await listPackResources(this.pack, this.listingOptions)
    const before = new Map(this.listing.resources.map((r) => [r.path, r]))
    for (const resource of now.resources) {
      // Context-resolution records a client writes into runs/ are not pack content: they never invalidate the index.
      if (CLIENT_RECORD.test(resource.path)) continue
      // An indexed file is compared with what was read; any other with what was listed.
      const old = this.files.get(resource.path) ?? before.get(resource.path)
      if (!old || old.size !== resource.size || old.mtimeMs !== resource.mtimeMs) changed.push(resource.path)
      before.delete(resource.path)
    }
    changed.push(...[...before.keys()].filter((path) => !CLIENT_RECORD.test(path)))
    return [...new Set(changed)].sort()
  }
}

/** Options of {@link PackIndexCache}: how indexes are built, how many are kept, how often they are re-checked. */
export interface PackIndexCacheOptions extends PackIndexOptions {
  /** Most indexes kept; the least recently used goes first (default 16). */
  maxEntries?: number
  /**
   * Most bytes of indexed text kept, summed over the indexes (default 128 MiB;
   * an index takes about 5× its text in memory). The newest index is kept even
   * when it alone is larger.
   */
  maxBytes?: number
  /**
   * Re-check an index's files (one listing: sizes and mtimes, files added or
   * removed) when it was last checked at least this long ago, and rebuild it
   * when any changed. Default: never — a {@link PackSession} re-checks in
   * `refresh()`; long-lived tool servers set it (0 re-checks on every use).
   */
  revalidateMs?: number
}

interface CacheEntry {
  index: Promise<PackIndex>
  /** When the files were last known unchanged (build start, or the last check). */
  checkedAt: number
  /** A re-check in flight, shared by concurrent callers. */
  check?: Promise<PackIndex>
  /** Indexed bytes, once built. */
  bytes?: number
}

/**
 * Default bound of indexed text kept by a {@link PackIndexCache}.
 * @example
 * new PackIndexCache({ maxBytes: DEFAULT_INDEX_CACHE_BYTES / 4 })
 */
export const DEFAULT_INDEX_CACHE_BYTES = 128 * 2 ** 20

/**
 * Keeps {@link PackIndex}es by pack root and KNOWLEDGE.md hash, bounded by
 * count and indexed bytes (least recently used dropped first), optionally
 * re-checking files so that a changed pack is re-indexed.
 * @example
 * const cache = new PackIndexCache({ maxEntries: 8, revalidateMs: 1000 })
 * const index = await cache.get(pack) // built once; rebuilt after a file changes
 */
export class PackIndexCache {
  private readonly entries = new Map<string, CacheEntry>()
  private readonly logger: Logger

  constructor(private readonly options: PackIndexCacheOptions = {}) {
    this.logger = options.logger ?? noopLogger
  }

  private key(pack: Pick<LoadedPack, 'realRoot' | 'contentHash'>): string {
    return `${pack.realRoot}\u0000${pack.contentHash}`
  }

  /** Number of indexes kept (built or being built). */
  get size(): number {
    return this.entries.size
  }

  /**
   * The index of a pack: built on first use; with `revalidateMs`, re-checked
   * when due and rebuilt when a file changed.
   */
  get(pack: LoadedPack): Promise<PackIndex> {
    const key = this.key(pack)
    const entry = this.entries.get(key)
    if (!entry) return this.build(key, pack)
    // Most recently used last.
    this.entries.delete(key)
    this.entries.set(key, entry)
    const every = this.options.revalidateMs
    if (every === undefined || entry.check || Date.now() - entry.checkedAt < every) return entry.check ?? entry.index
    entry.check = this.revalidate(key, pack, entry).finally(() => {
      entry.check = undefined
    })
    return entry.check
  }

  private build(key: string, pack: LoadedPack): Promise<PackIndex> {
    const entry: CacheEntry = { index: PackIndex.build(pack, this.options), checkedAt: Date.now() }
    this.entries.set(key, entry)
    entry.index.then(
      (index) => {
        entry.bytes = index.bytes
        if (this.entries.get(key) === entry) this.evict(key)
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key)
      },
    )
    return entry.index
  }

  private async revalidate(key: string, pack: LoadedPack, entry: CacheEntry): Promise<PackIndex> {
    const index = await entry.index
    const started = Date.now()
    const changed = await index.changedFiles()
    if (changed.length === 0) {
      entry.checkedAt = started
      return index
    }
    this.logger.info('packs.index.changed', { pack: pack.item.name, files: changed.length })
    if (this.entries.get(key) === entry) this.entries.delete(key)
    return this.entries.get(key)?.index ?? this.build(key, pack)
  }

  /** Drops least recently used indexes beyond the bounds; never the one just built. */
  private evict(keep: string): void {
    const maxEntries = this.options.maxEntries ?? 16
    const maxBytes = this.options.maxBytes ?? DEFAULT_INDEX_CACHE_BYTES
    let bytes = 0
    for (const entry of this.entries.values()) bytes += entry.bytes ?? 0
    for (const [key, entry] of [...this.entries]) {
      if (this.entries.size <= maxEntries && bytes <= maxBytes) break
      if (key === keep) continue
      bytes -= entry.bytes ?? 0
      this.entries.delete(key)
      this.logger.debug('packs.index.evicted', { root: key.split('\u0000')[0], bytes: entry.bytes ?? 0 })
    }
  }

  /** The index of a pack if one was built or is being built; never builds or re-checks. */
  peek(pack: LoadedPack): Promise<PackIndex> | undefined {
    return this.entries.get(this.key(pack))?.index
  }

  /** Drops the cached index of a pack (all versions). */
  invalidate(pack: Pick<LoadedPack, 'realRoot'>): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${pack.realRoot}\u0000`)) this.entries.delete(key)
  }

  /** Drops everything. */
  clear(): void {
    this.entries.clear()
  }
}
