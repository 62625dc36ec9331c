/**
 * Configuration errors name what the user set: a bad value from an environment variable is
 * reported as that variable (with the configuration path beside it), one from the config file
 * by its path.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/cli/config.js'
import { KnowHubError } from '../../src/core/errors.js'

function failure(run: () => unknown): KnowHubError {
  try {
    run()
  } catch (error) {
    if (error instanceof KnowHubError) return error
    throw error
  }
  throw new Error('expected a configuration error')
}

function withFile<T>(content: object, run: (file: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-config-'))
  try {
    const file = join(dir, 'knowhub.json')
    writeFileSync(file, JSON.stringify(content))
    return run(file)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('environment over the config file', () => {
  it('sets nested values beside those of the file, in the kind of each variable', () => {
    const config = withFile({ secrets: { keyFile: '/etc/k' }, server: { port: 9000, host: '0.0.0.0' } }, (file) =>
      loadConfig(
        { KNOWHUB_SECRET_KEY: 'a'.repeat(64), KNOWHUB_SECRETS_READ_ONLY: 'Yes', KNOWHUB_PORT: '9100', KNOWHUB_TRUSTED_PROXIES: ' 10.0.0.1 ,, 10.1.0.0/16 ' },
        { configFile: file },
      ),
    )
    expect(config.secrets).toMatchObject({ key: 'a'.repeat(64), keyFile: '/etc/k', readOnly: true })
    expect(config.server).toMatchObject({ port: 9100, host: '0.0.0.0', trustedProxies: ['10.0.0.1', '10.1.0.0/16'] })
  })

  it('applies embedder variables only with KNOWHUB_EMBEDDER, and another provider drops the embedder of the file', () => {
    const file = { embedder: { provider: 'hashed', dimension: 64 } }
    expect(withFile(file, (f) => loadConfig({ KNOWHUB_EMBED_DIM: '128' }, { configFile: f })).embedder).toMatchObject({ provider: 'hashed', dimension: 64 })
    expect(withFile(file, (f) => loadConfig({ KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_EMBED_DIM: '128' }, { configFile: f })).embedder).toMatchObject({
      dimension: 128,
    })
    const sentence = withFile(file, (f) => loadConfig({ KNOWHUB_EMBEDDER: 'sentence' }, { configFile: f })).embedder
    expect(sentence.provider).toBe('sentence')
    expect(sentence).not.toHaveProperty('dimension', 64)
  })

  it('applies KNOWHUB_EMBED_THREADS to the sentence embedder, the default one, without KNOWHUB_EMBEDDER', () => {
    expect(loadConfig({ KNOWHUB_EMBED_THREADS: '3' }).embedder).toEqual({ provider: 'sentence', hashedDimension: 512, semanticWeight: 0.7, threads: 3 })
    expect(
      withFile({ embedder: { provider: 'sentence', semanticWeight: 0.5 } }, (f) => loadConfig({ KNOWHUB_EMBED_THREADS: '2' }, { configFile: f })).embedder,
    ).toEqual({
      provider: 'sentence',
      hashedDimension: 512,
      semanticWeight: 0.5,
      threads: 2,
    })
    // Another embedder has no model threads: the variable does not apply.
    expect(loadConfig({ KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_EMBED_THREADS: '2' }).embedder).toEqual({ provider: 'hashed', dimension: 512 })
    expect(loadConfig({}).embedder).not.toHaveProperty('threads')
    const error = failure(() => loadConfig({ KNOWHUB_EMBED_THREADS: '0' }))
    expect(error.code).toBe('config_error')
    expect(error.message).toContain('KNOWHUB_EMBED_THREADS (embedder.threads)')
  })

  it('reads the query/document convention of the openai embedder: a table name, or prefixes and input types of its own', () => {
    const base = { KNOWHUB_EMBEDDER: 'openai', KNOWHUB_EMBED_URL: 'http://127.0.0.1:8000/v1', KNOWHUB_EMBED_MODEL: 'my-model' }
    expect(loadConfig(base).embedder).toMatchObject({ convention: 'auto', concurrency: 2 })
    expect(loadConfig({ ...base, KNOWHUB_EMBED_CONVENTION: 'nomic', KNOWHUB_EMBED_CONCURRENCY: '4' }).embedder).toMatchObject({
      convention: 'nomic',
      concurrency: 4,
    })
    expect(loadConfig({ ...base, KNOWHUB_EMBED_QUERY_PREFIX: 'query: ', KNOWHUB_EMBED_DOCUMENT_PREFIX: 'passage: ' }).embedder).toMatchObject({
      convention: { queryPrefix: 'query: ', documentPrefix: 'passage: ' },
    })
    expect(loadConfig({ ...base, KNOWHUB_EMBED_QUERY_INPUT_TYPE: 'query', KNOWHUB_EMBED_DOCUMENT_INPUT_TYPE: 'passage' }).embedder).toMatchObject({
      convention: { queryInputType: 'query', documentInputType: 'passage' },
    })
    expect(failure(() => loadConfig({ ...base, KNOWHUB_EMBED_CONVENTION: 'e6' })).message).toContain('KNOWHUB_EMBED_CONVENTION')
  })

  it('gives a principal set by variables every permission unless the file lists them', () => {
    expect(loadConfig({ KNOWHUB_USER: 'ann', KNOWHUB_ORG: 'acme' }).principal).toMatchObject({
      user: 'ann',
      org: 'acme',
      permissions: ['read', 'write', 'secrets:read', 'admin', 'hub:admin'],
    })
    const listed = withFile({ principal: { permissions: ['read'] } }, (f) => loadConfig({ KNOWHUB_USER: 'ann' }, { configFile: f }))
    expect(listed.principal).toMatchObject({ user: 'ann', permissions: ['read'] })
  })
})

describe('configuration errors', () => {
  it('name the environment variable that set the bad value', () => {
    const error = failure(() => loadConfig({ KNOWHUB_EMBEDDER: 'openai', KNOWHUB_EMBED_URL: 'not a url', KNOWHUB_EMBED_MODEL: 'm' }))
    expect(error.code).toBe('config_error')
    expect(error.message).toBe('Invalid configuration: KNOWHUB_EMBED_URL (embedder.baseUrl): Invalid URL')
    const llm = failure(() => loadConfig({ KNOWHUB_LLM_URL: 'ftp:/nowhere x', KNOWHUB_LLM_MODEL: 'm' }))
    expect(llm.message).toContain('KNOWHUB_LLM_URL (llm.url)')
    expect(failure(() => loadConfig({ KNOWHUB_PORT: '84x' })).message).toBe('KNOWHUB_PORT must be a number, got "84x"')
    expect(failure(() => loadConfig({ KNOWHUB_SHARED_BUFFERS: '16 MB' })).message).toBe(
      'Invalid configuration: KNOWHUB_SHARED_BUFFERS (embedded.sharedBuffers): a size such as 16MB, 512kB or 1GB',
    )
    expect(loadConfig({ KNOWHUB_SHARED_BUFFERS: '64MB' }).embedded.sharedBuffers).toBe('64MB')
    const proxies = failure(() => loadConfig({ KNOWHUB_RATE_LIMIT: '-1' }))
    expect(proxies.message).toContain('KNOWHUB_RATE_LIMIT (server.rateLimit)')
  })

  it('name the configuration path when the config file set it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-config-'))
    try {
      const file = join(dir, 'knowhub.json')
      writeFileSync(file, JSON.stringify({ embedder: { provider: 'openai', baseUrl: 'not a url', model: 'm' } }))
      const error = failure(() => loadConfig({}, { configFile: file }))
      expect(error.message).toBe('Invalid configuration: embedder.baseUrl: Invalid URL')
      expect(error.message).not.toContain('KNOWHUB_EMBED_URL')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
