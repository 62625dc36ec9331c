/**
 * `knowhub/client`'s public surface: the runtime export list, an @example on each,
 * and portability (Web APIs and zod only: no Node built-ins, no console or process).
 */
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as client from '../../src/client/index.js'
import { exportsWithoutExample } from '../helpers/examples.js'

const SRC = fileURLToPath(new URL('../../src/client/', import.meta.url))

async function sources(): Promise<Array<{ file: string; text: string }>> {
  const files = (await readdir(SRC)).filter((f) => f.endsWith('.ts'))
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(join(SRC, file), 'utf8') })))
}

describe('knowhub/client public surface', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(client).sort()).toEqual([
      'BatchUpdateResult',
      'ClientErrorCode',
      'DEFAULT_BASE_URL',
      'DEFAULT_TIMEOUT_MS',
      'Deleted',
      'ExpandedResource',
      'Health',
      'KnowHubClientError',
      'KnowledgeEntryView',
      'KnowledgePage',
      'KnowledgeVersions',
      'OpenApiDocument',
      'ResourcePage',
      'SearchPage',
      'SearchResultView',
      'clientBackend',
      'createClient',
      'isKnowHubClientError',
      'isServerErrorCode',
      'parseRetryAfter',
      'resourcePath',
      'toKnowHubError',
    ])
  })

  it('documents every runtime export with a JSDoc @example', async () => {
    const all = await sources()
    const missing = exportsWithoutExample(
      Object.keys(client),
      all.map((s) => s.text),
    )
    expect(missing).toEqual([])
  })

  it('is portable: no Node built-ins or database code at run time, no console or process', async () => {
    for (const { file, text } of await sources()) {
      const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
      const runtimeImports = [...code.matchAll(/^import (?!type )[^;]*? from '([^']+)'/gm)].map((m) => m[1]!)
      for (const source of runtimeImports) expect(source, `${file} imports ${source}`).toMatch(/^(zod|\.\/.*|\.\.\/core\/.*)$/)
      expect(code, file).not.toMatch(/\bconsole\.|\bprocess\./)
    }
  })
})
