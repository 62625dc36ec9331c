/**
 * The local (ONNX) provider. No model ships with the repo and nothing may be
 * downloaded, so the real inference path is not exercised here: these tests
 * cover every error path with real folders, the real (failing) import of the
 * absent `@huggingface/transformers`, and the glue code against a stand-in
 * module that has transformers.js's `env` + `pipeline` surface.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, sep } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocalEmbedder, TRANSFORMERS_INSTALL } from '../../src/embed/local.js'
import { rejection } from '../helpers/errors.js'

let root: string

/** A folder with the transformers.js layout (the files are placeholders). */
async function modelFolder(name: string, files: string[]): Promise<string> {
  const folder = join(root, name)
  for (const file of files) {
    await mkdir(join(folder, file, '..'), { recursive: true })
    await writeFile(join(folder, file), file.endsWith('.json') ? '{}' : 'onnx')
  }
  await mkdir(folder, { recursive: true })
  return folder
}

const COMPLETE = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx']
const transformersInstalled = existsSync(join(process.cwd(), 'node_modules', '@huggingface', 'transformers'))

interface PipelineCall {
  task: string
  model: string
  options: Record<string, unknown>
}

/** A stand-in for transformers.js: a 4-dimensional "model" that counts letters. */
function fakeTransformers(calls: PipelineCall[], runs: Array<{ texts: string[]; options: unknown }>, disposed: string[]): unknown {
  const env = { allowRemoteModels: true, allowLocalModels: false, localModelPath: '/models/' }
  return {
    env,
    async pipeline(task: string, model: string, options: Record<string, unknown>) {
      calls.push({ task, model, options })
      const extractor = async (texts: string[], runOptions: unknown) => {
        runs.push({ texts, options: runOptions })
        const data = new Float32Array(texts.length * 4)
        texts.forEach((text, row) => {
          data[row * 4] = text.length + 1
          data[row * 4 + 1] = (text.match(/a/gu) ?? []).length
          data[row * 4 + 2] = (text.match(/e/gu) ?? []).length
          data[row * 4 + 3] = 1
        })
        return { dims: [texts.length, 4], data }
      }
      return Object.assign(extractor, {
        dispose: async () => {
          disposed.push(model)
        },
      })
    },
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'knowhub-local-embed-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

describe('local ONNX embedder: errors', () => {
  it('fails with config_error when the folder does not exist', async () => {
    const error = await rejection(createLocalEmbedder({ provider: 'local', path: join(root, 'nope') }))
    expect(error.code).toBe('config_error')
    expect(error.message).toContain(join(root, 'nope'))
    expect(error.message).toContain('KNOWHUB_EMBED_PATH')
  })

  it('lists every missing file: config.json, tokenizer.json and the ONNX weights', async () => {
    const folder = await modelFolder('empty-model', [])
    const error = await rejection(createLocalEmbedder({ provider: 'local', path: folder }))
    expect(error.code).toBe('config_error')
    expect(error.details?.missing).toEqual(['config.json', 'tokenizer.json', expect.stringContaining('onnx/model.onnx')])

    const noWeights = await modelFolder('no-weights', ['config.json', 'tokenizer.json'])
    const weights = await rejection(createLocalEmbedder({ provider: 'local', path: noWeights }))
    expect(weights.details?.missing).toEqual([expect.stringContaining('model_quantized.onnx')])
  })

  it('rejects folder names transformers.js would not read as a model id', async () => {
    const folder = await modelFolder('models--org--e5', COMPLETE)
    const error = await rejection(createLocalEmbedder({ provider: 'local', path: folder }, { importTransformers: () => Promise.resolve({}) }))
    expect(error.code).toBe('config_error')
    expect(error.message).toMatch(/Rename/)
  })

  it('says how to install @huggingface/transformers when it cannot be imported', async () => {
    const folder = await modelFolder('e5-small', COMPLETE)
    // A real failing import of a package that does not exist.
    const error = await rejection(
      createLocalEmbedder({ provider: 'local', path: folder }, { importTransformers: () => import('knowhub-no-such-package-' + 'x') }),
    )
    expect(error.code).toBe('config_error')
    expect(error.message).toContain('ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface/transformers')
    expect(error.details).toMatchObject({ install: TRANSFORMERS_INSTALL })
  })

  it.skipIf(transformersInstalled)('fails the same way with the default import, since the package is not installed here', async () => {
    const folder = await modelFolder('e5-default-import', COMPLETE)
    const error = await rejection(createLocalEmbedder({ provider: 'local', path: folder }))
    expect(error.code).toBe('config_error')
    expect(error.message).toContain(TRANSFORMERS_INSTALL)
  })

  it('reports a module without the transformers.js surface, and a model that fails to load', async () => {
    const folder = await modelFolder('e5-broken', COMPLETE)
    const shape = await rejection(createLocalEmbedder({ provider: 'local', path: folder }, { importTransformers: () => Promise.resolve({ other: 1 }) }))
    expect(shape.code).toBe('embedder_failed')
    expect(shape.message).toMatch(/no `pipeline`/)

    const failing = {
      env: {},
      pipeline: () => Promise.reject(new Error('Protobuf parsing failed')),
    }
    const load = await rejection(createLocalEmbedder({ provider: 'local', path: folder }, { importTransformers: () => Promise.resolve(failing) }))
    expect(load.code).toBe('embedder_failed')
    expect(load.message).toContain('Protobuf parsing failed')
    expect(load.message).toContain('onnx/model.onnx')
  })

  it('rejects an invalid config', async () => {
    const error = await rejection(createLocalEmbedder({ provider: 'local', path: '' }))
    expect(error.code).toBe('config_error')
    expect(error.message).toMatch(/path/)
  })
})

describe('local ONNX embedder: glue code, against a stand-in for transformers.js', () => {
  it('configures local-only loading, pools, normalises, batches and closes', async () => {
    const folder = await modelFolder('mini-lm', COMPLETE)
    const calls: PipelineCall[] = []
    const runs: Array<{ texts: string[]; options: unknown }> = []
    const disposed: string[] = []
    const module = fakeTransformers(calls, runs, disposed) as { env: Record<string, unknown> }
    const embedder = await createLocalEmbedder(
      { provider: 'local', path: folder, pooling: 'cls' },
      { importTransformers: () => Promise.resolve({ default: module }), batchSize: 2 },
    )
    expect(module.env).toEqual({ allowRemoteModels: false, allowLocalModels: true, localModelPath: root + sep })
    expect(calls).toEqual([
      { task: 'feature-extraction', model: 'mini-lm', options: { local_files_only: true, dtype: 'fp32', subfolder: 'onnx', device: 'cpu' } },
    ])
    expect(embedder.model).toBe('local:mini-lm:cls')
    expect(embedder.dimension).toBe(4)

    const vectors = await embedder.embed(['a', 'banana', 'see', ''], { kind: 'document' })
    expect(runs.slice(1).map((run) => run.texts)).toEqual([
      ['a', 'banana'],
      ['see', ''],
    ])
    expect(runs[1]!.options).toEqual({ pooling: 'cls', normalize: true })
    for (const vector of vectors) {
      expect(vector).toHaveLength(4)
      expect(Math.hypot(...vector)).toBeCloseTo(1, 5)
    }
    await embedder.close?.()
    expect(disposed).toEqual(['mini-lm'])
    expect((await rejection(embedder.embed(['x'], { kind: 'document' }))).message).toMatch(/closed/)
  })

  it('picks the quantized weights and top-level ONNX files when that is what the folder has', async () => {
    const quantized = await modelFolder('e5-q8', ['config.json', 'tokenizer.json', 'onnx/model_quantized.onnx'])
    const flat = await modelFolder('e5-flat', ['config.json', 'tokenizer.json', 'model_fp16.onnx'])
    const calls: PipelineCall[] = []
    for (const path of [quantized, flat]) {
      await createLocalEmbedder({ provider: 'local', path }, { importTransformers: () => Promise.resolve(fakeTransformers(calls, [], [])) })
    }
    expect(calls.map((call) => [call.options.dtype, call.options.subfolder])).toEqual([
      ['q8', 'onnx'],
      ['fp16', ''],
    ])
  })

  it('rejects an output tensor of the wrong shape', async () => {
    const folder = await modelFolder('bad-shape', COMPLETE)
    const module = {
      env: {},
      pipeline: () => Promise.resolve(() => Promise.resolve({ dims: [1, 2, 3], data: new Float32Array(6) })),
    }
    const error = await rejection(createLocalEmbedder({ provider: 'local', path: folder }, { importTransformers: () => Promise.resolve(module) }))
    expect(error.code).toBe('embedder_failed')
    expect(error.message).toMatch(/shape \[1,2,3\]/)
  })
})
