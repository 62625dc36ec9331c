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

describe('configuration errors', () => {
  it('name the environment variable that set the bad value', () => {
    const error = failure(() => loadConfig({ KNOWHUB_EMBEDDER: 'openai', KNOWHUB_EMBED_URL: 'not a url', KNOWHUB_EMBED_MODEL: 'm' }))
    expect(error.code).toBe('config_error')
    expect(error.message).toBe('Invalid configuration: KNOWHUB_EMBED_URL (embedder.baseUrl): Invalid URL')
    const llm = failure(() => loadConfig({ KNOWHUB_LLM_URL: 'ftp:/nowhere x', KNOWHUB_LLM_MODEL: 'm' }))
    expect(llm.message).toContain('KNOWHUB_LLM_URL (llm.url)')
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
