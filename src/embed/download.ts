/**
 * The `local` provider's opt-in download (issue 40): a named model (`Xenova/multilingual-e5-small`)
 * fetched once from a Hugging Face-compatible hub into a cache under the data folder, every file
 * checked against the hub's checksum (SHA-256 for large files, the git blob hash for small ones),
 * with progress. Refused unless the config says `download: true` (`--allow-download`): KnowHub
 * never reaches outside the machine unasked. Only the files transformers.js reads are fetched:
 * the config and tokenizer files and one ONNX weight file.
 */
import { createHash } from 'node:crypto'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { z } from 'zod'
import { KnowHubError } from '../core/errors.js'
import { noopLogger, type Logger } from '../core/logger.js'

/** What to download, from where, into where. */
export interface ModelDownload {
  /** `org/name` on the hub, e.g. `Xenova/multilingual-e5-small`. */
  model: string
  /** The hub's root, e.g. `https://huggingface.co` (a mirror, or a test's local server). */
  hubUrl: string
  revision: string
  /** The cache folder: the model goes to `<cacheDir>/<org>/<name>`. */
  cacheDir: string
  /** The ONNX weight files to take, best first: the first the model has is downloaded. */
  weights: readonly string[]
  fetch?: typeof globalThis.fetch
  logger?: Logger
  /** Told the bytes received of each file as they come (a progress bar). */
  onProgress?: (progress: { file: string; received: number; total: number }) => void
}

/** The part of the hub's model answer (`/api/models/{model}/revision/{revision}?blobs=true`) read here. */
const ModelInfo = z.object({
  sha: z.string().optional(),
  siblings: z.array(
    z.object({
      rfilename: z.string(),
      size: z.number().int().nonnegative().optional(),
      blobId: z.string().optional(),
      lfs: z.object({ sha256: z.string(), size: z.number().int().nonnegative() }).optional(),
    }),
  ),
})
type Sibling = z.infer<typeof ModelInfo>['siblings'][number]

/** The files transformers.js reads beside the weights (those the model has). */
const SMALL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']
/** Written last: the files of a complete, checked download. */
const MANIFEST = '.knowhub-download.json'
const MODEL_NAME = /^[\w.-]{1,96}\/[\w.-]{1,96}$/u

/**
 * The model's folder in the cache, downloading it first when it is not there yet (a folder with
 * the manifest of a complete, checked download is used as it is, without a request).
 * @example
 * const folder = await downloadModel({ model: 'Xenova/multilingual-e5-small', hubUrl: 'https://huggingface.co', revision: 'main', cacheDir: '.knowhub/models', weights: ['onnx/model_quantized.onnx'] })
 */
export async function downloadModel(options: ModelDownload): Promise<string> {
  if (!MODEL_NAME.test(options.model) || options.model.includes('..')) {
    throw new KnowHubError('config_error', `The model to download must be named org/name (letters, digits, '-', '_', '.'), got "${options.model}"`)
  }
  const folder = join(options.cacheDir, ...options.model.split('/'))
  if (existsSync(join(folder, MANIFEST))) return folder
  const logger = options.logger ?? noopLogger
  const info = await modelInfo(options)
  const files = chooseFiles(options, info.siblings)
  logger.info('embed.local.download', { model: options.model, hub: options.hubUrl, files: files.map((f) => f.rfilename) })
  for (const file of files) await downloadFile(options, folder, file)
  await writeFile(
    join(folder, MANIFEST),
    JSON.stringify({ model: options.model, revision: options.revision, sha: info.sha, files: files.map((f) => f.rfilename) }, null, 2),
  )
  return folder
}

/** The hub's list of the model's files with their checksums. */
async function modelInfo(options: ModelDownload): Promise<z.infer<typeof ModelInfo>> {
  const url = `${options.hubUrl.replace(/\/+$/u, '')}/api/models/${options.model}/revision/${encodeURIComponent(options.revision)}?blobs=true`
  const response = await request(options, url)
  const parsed = ModelInfo.safeParse(await response.json().catch(() => undefined))
  if (!parsed.success) throw new KnowHubError('embedder_failed', `${url} did not answer a model's file list`, { url })
  return parsed.data
}

/** The small files the model has, and its first weight file of `weights`. */
function chooseFiles(options: ModelDownload, siblings: readonly Sibling[]): Sibling[] {
  const byName = new Map(siblings.map((s) => [s.rfilename, s]))
  const weight = options.weights.map((w) => byName.get(w)).find((s) => s !== undefined)
  const missing = ['config.json', 'tokenizer.json'].filter((f) => !byName.has(f))
  if (!weight || missing.length > 0) {
    throw new KnowHubError(
      'config_error',
      `${options.model} on ${options.hubUrl} lacks ${[...missing, ...(weight ? [] : [`one of ${options.weights.join(', ')}`])].join(', ')}: it needs a transformers.js ONNX export`,
      { model: options.model, missing },
    )
  }
  return [...SMALL_FILES.flatMap((f) => byName.get(f) ?? []), weight]
}

/** GET `url`, failing with `embedder_failed` on a network error or a status other than 200. */
async function request(options: ModelDownload, url: string): Promise<Response> {
  let response: Response
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, { redirect: 'follow' })
  } catch (error) {
    throw new KnowHubError('embedder_failed', `Downloading from ${url} failed: ${(error as Error).message}`, { url }, { cause: error })
  }
  if (!response.ok) throw new KnowHubError('embedder_failed', `Downloading from ${url} failed: HTTP ${response.status}`, { url, status: response.status })
  return response
}

/**
 * One file into the folder: streamed to a `.part` file while its hash is computed, checked, then
 * renamed into place; a mismatch removes it and fails.
 */
async function downloadFile(options: ModelDownload, folder: string, file: Sibling): Promise<void> {
  const url = `${options.hubUrl.replace(/\/+$/u, '')}/${options.model}/resolve/${encodeURIComponent(options.revision)}/${file.rfilename}`
  const target = join(folder, file.rfilename)
  await mkdir(dirname(target), { recursive: true })
  const response = await request(options, url)
  const total = file.lfs?.size ?? file.size ?? Number(response.headers.get('content-length') ?? 0)
  const sha256 = createHash('sha256')
  const chunks: Buffer[] = []
  const part = createWriteStream(`${target}.part`)
  let received = 0
  try {
    for await (const chunk of response.body ?? []) {
      const bytes = Buffer.from(chunk as Uint8Array)
      sha256.update(bytes)
      if (!file.lfs) chunks.push(bytes)
      received += bytes.length
      if (!part.write(bytes)) await new Promise<void>((resolve) => part.once('drain', () => resolve()))
      options.onProgress?.({ file: file.rfilename, received, total })
    }
    await new Promise<void>((resolve, reject) => part.end((error?: Error | null) => (error ? reject(error) : resolve())))
    checkFile(options, file, url, sha256.digest('hex'), chunks)
    await rename(`${target}.part`, target)
  } catch (error) {
    part.destroy()
    await rm(`${target}.part`, { force: true })
    throw error
  }
}

/** Checks a downloaded file against the hub: SHA-256 of a large (LFS) file, git's blob hash of a small one. */
function checkFile(options: ModelDownload, file: Sibling, url: string, sha256: string, chunks: Buffer[]): void {
  const fail = (expected: string, got: string) =>
    new KnowHubError('embedder_failed', `${url} does not match the hub's checksum (expected ${expected}, got ${got}): the file was not kept`, {
      url,
      expected,
      got,
    })
  if (file.lfs) {
    if (sha256 !== file.lfs.sha256) throw fail(file.lfs.sha256, sha256)
    return
  }
  if (!file.blobId) throw new KnowHubError('embedder_failed', `${options.hubUrl} gave no checksum for ${file.rfilename}: it was not kept`, { url })
  const content = Buffer.concat(chunks)
  const blob = createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex')
  if (blob !== file.blobId) throw fail(file.blobId, blob)
}
