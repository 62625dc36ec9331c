import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { EmbedderConfig } from '../../src/core/config.js'
import type { LogFields } from '../../src/core/logger.js'
import * as embed from '../../src/embed/index.js'
import { startOpenAIStub } from '../helpers/openai-stub.js'

describe('knowhub/embed', () => {
  it('exports exactly its public surface', () => {
    expect(Object.keys(embed).sort()).toEqual([
      'HASHED_VERSION',
      'TRANSFORMERS_INSTALL',
      'TRANSFORMERS_PACKAGE',
      'cosine',
      'createEmbedder',
      'createHashedEmbedder',
      'createLocalEmbedder',
      'createOpenAIEmbedder',
      'l2normalize',
    ])
  })

  it('never imports @huggingface/transformers statically (it is optional and not installed)', async () => {
    for (const file of ['index', 'factory', 'local', 'openai', 'hashed', 'vector', 'embedder']) {
      const source = await readFile(new URL(`../../src/embed/${file}.ts`, import.meta.url), 'utf8')
      expect(source).not.toMatch(/from '@huggingface\/transformers'/u)
      expect(source).not.toMatch(/import\('@huggingface\/transformers'\)/u)
    }
  })

  it('createEmbedder builds the hashed default from the config schema', async () => {
    const logged: Array<[string, LogFields | undefined]> = []
    const logger = { debug() {}, warn() {}, error() {}, info: (message: string, fields?: LogFields) => void logged.push([message, fields]) }
    const embedder = await embed.createEmbedder(EmbedderConfig.parse({ provider: 'hashed' }), { logger })
    expect(embedder.model).toBe('hashed-ngram-v2-512')
    expect(embedder.dimension).toBe(512)
    expect(logged).toEqual([['embed.ready', { provider: 'hashed', model: 'hashed-ngram-v2-512', dimension: 512 }]])
  })

  it('createEmbedder builds the OpenAI-compatible provider and the local one', async () => {
    await using stub = await startOpenAIStub({ dimension: 24 })
    const openai = await embed.createEmbedder(EmbedderConfig.parse({ provider: 'openai', baseUrl: stub.url, model: 'stub-embed' }))
    expect(openai.dimension).toBe(24)
    expect(openai.model).toBe('openai:stub-embed')

    await expect(embed.createEmbedder(EmbedderConfig.parse({ provider: 'local', path: '/nonexistent/model' }))).rejects.toMatchObject({
      code: 'config_error',
    })
  })
})
