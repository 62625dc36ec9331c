/**
 * The local provider's opt-in model download (issue 40), against a Hugging Face-compatible hub this
 * test runs on 127.0.0.1 and a small model it builds (config, tokenizer, an ONNX weight file):
 * refused by default without a request; with `download: true` fetched once into the cache under the
 * data folder with progress, every file checked (SHA-256 of the weights, git's blob hash of the
 * small files), then loaded (a stand-in for transformers.js, as in local.test.ts) with the model's
 * query/document prefixes; a file that does not match its checksum is never kept.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createLocalEmbedder } from '../../src/embed/local.js'
import { rejection } from '../helpers/errors.js'

const MODEL = 'test-org/multilingual-e5-small'
/** The model the test builds: small files and an "ONNX" weight file of 300 KB. */
const FILES: Record<string, Buffer> = {
  'config.json': Buffer.from('{"model_type":"bert","hidden_size":4}'),
  'tokenizer.json': Buffer.from('{"version":"1.0","model":{"type":"WordPiece"}}'),
  'tokenizer_config.json': Buffer.from('{"do_lower_case":false}'),
  'onnx/model_quantized.onnx': Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) % 251)),
  'README.md': Buffer.from('not downloaded'),
}
const gitBlob = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex')
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')

describe('the local embedder downloads its model only when allowed', () => {
  let server: Server
  let hubUrl: string
  let cacheDir: string
  const cacheDirs: string[] = []
  const requests: string[] = []
  let corrupt = false

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      requests.push(url.pathname)
      if (url.pathname === `/api/models/${MODEL}/revision/main` && url.searchParams.get('blobs') === 'true') {
        const siblings = Object.entries(FILES).map(([name, bytes]) =>
          name.endsWith('.onnx')
            ? { rfilename: name, size: bytes.length, lfs: { sha256: sha256(bytes), size: bytes.length } }
            : { rfilename: name, size: bytes.length, blobId: gitBlob(bytes) },
        )
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sha: 'abc123', siblings }))
        return
      }
      const prefix = `/${MODEL}/resolve/main/`
      const bytes = url.pathname.startsWith(prefix) ? FILES[url.pathname.slice(prefix.length)] : undefined
      if (!bytes) return void res.writeHead(404).end('not found')
      const body = corrupt && url.pathname.endsWith('.onnx') ? Buffer.concat([bytes.subarray(0, -1), Buffer.from([0])]) : bytes
      res.writeHead(200, { 'content-length': body.length }).end(body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())))
  beforeEach(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'knowhub-models-'))
    cacheDirs.push(cacheDir)
    requests.length = 0
    corrupt = false
  })
  afterAll(async () => {
    for (const dir of cacheDirs) await rm(dir, { recursive: true, force: true })
  })

  /** A stand-in for transformers.js (4 numbers a text), recording what it was given. */
  function fakeTransformers(seen: { texts: string[][]; model?: string; path?: string }) {
    const env = { allowRemoteModels: true, allowLocalModels: false, localModelPath: '' }
    return async () => ({
      env,
      async pipeline(_task: string, model: string) {
        seen.model = model
        seen.path = env.localModelPath
        return async (texts: string[]) => {
          seen.texts.push(texts)
          return { dims: [texts.length, 4], data: new Float32Array(texts.flatMap((t) => [t.length, 1, 2, 3])) }
        }
      },
    })
  }

  it('refuses by default, without a request, and says how to allow it', async () => {
    const seen = { texts: [] as string[][] }
    const error = await rejection(
      createLocalEmbedder({ provider: 'local', model: MODEL, hubUrl }, { modelCacheDir: cacheDir, importTransformers: fakeTransformers(seen) }),
    )
    expect(error.code).toBe('config_error')
    expect(error.message).toContain('KNOWHUB_EMBED_DOWNLOAD=1, or --allow-download')
    expect(requests).toEqual([])
  })

  it('with download: true, fetches the files once with progress, checks them, and embeds by the model’s prefixes', async () => {
    const seen = { texts: [] as string[][] }
    const progress: Array<{ file: string; received: number; total: number }> = []
    const embedder = await createLocalEmbedder(
      { provider: 'local', model: MODEL, hubUrl, download: true },
      { modelCacheDir: cacheDir, importTransformers: fakeTransformers(seen), onDownload: (p) => progress.push(p) },
    )
    const folder = join(cacheDir, 'test-org', 'multilingual-e5-small')
    for (const name of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx']) {
      expect(readFileSync(join(folder, name)).equals(FILES[name]!), name).toBe(true)
    }
    expect(existsSync(join(folder, 'README.md'))).toBe(false)
    const weights = progress.filter((p) => p.file === 'onnx/model_quantized.onnx')
    expect(weights.at(-1)).toEqual({ file: 'onnx/model_quantized.onnx', received: 300_000, total: 300_000 })
    expect(weights.length).toBeGreaterThan(1)
    expect(seen).toMatchObject({ model: 'multilingual-e5-small', path: join(cacheDir, 'test-org') + '/' })
    expect(embedder.model).toBe('local:multilingual-e5-small:mean#e5')
    await embedder.embed(['which language'], { kind: 'query' })
    await embedder.embed(['TypeScript'], { kind: 'document' })
    expect(seen.texts.slice(-2)).toEqual([['query: which language'], ['passage: TypeScript']])

    requests.length = 0
    await createLocalEmbedder(
      { provider: 'local', model: MODEL, hubUrl, download: true },
      { modelCacheDir: cacheDir, importTransformers: fakeTransformers(seen) },
    )
    expect(requests).toEqual([])
  })

  it('keeps no file that does not match its checksum', async () => {
    corrupt = true
    const seen = { texts: [] as string[][] }
    const error = await rejection(
      createLocalEmbedder({ provider: 'local', model: MODEL, hubUrl, download: true }, { modelCacheDir: cacheDir, importTransformers: fakeTransformers(seen) }),
    )
    expect(error.code).toBe('embedder_failed')
    expect(error.message).toContain("does not match the hub's checksum")
    const onnx = join(cacheDir, 'test-org', 'multilingual-e5-small', 'onnx')
    expect(await readdir(onnx)).toEqual([])
    expect(existsSync(join(cacheDir, 'test-org', 'multilingual-e5-small', '.knowhub-download.json'))).toBe(false)
  })
})
