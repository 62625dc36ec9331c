/**
 * A data folder KnowHub may not write is said in words (`config_error` naming the folder and the
 * fix), not as a raw EACCES on a temp file inside it. Run for real: the store's data-folder check
 * and the secret key file (the first two things that touch the folder when KnowHub opens) in a
 * child process that may not write the folder — as an unprivileged user when the test runs as
 * root (root ignores permissions), else as this user on a folder made read-only. The child runs
 * those modules bundled into one file beside the folder, so it needs no access to the checkout
 * (a clone in a private temp folder is not readable by that user).
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const base = mkdtempSync(join(tmpdir(), 'knowhub-data-dir-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

interface Failure {
  code: string
  message: string
  details: { folder: string; errno: string }
}

/** Opens the data folder `data` as KnowHub does, in a process that may not write it; what each step threw. */
async function openAsOther(data: string): Promise<{ folder: Failure | null; keyFile: Failure | null }> {
  const bundled = await build({
    stdin: {
      contents: `export { prepareDataDir } from './src/store/data-dir.ts'\nexport { openKeyring } from './src/resources/key-file.ts'\n`,
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
  })
  const script = join(base, 'open-data-dir.mjs')
  writeFileSync(
    script,
    `${bundled.outputFiles[0]!.text}
const failure = (step) => { try { step(); return null } catch (error) { return { code: error.code, message: error.message, details: error.details } } }
const data = ${JSON.stringify(data)}
console.log(JSON.stringify({ folder: failure(() => prepareDataDir(data + '/db')), keyFile: failure(() => openKeyring({ dataDir: data })) }))
`,
  )
  chmodSync(script, 0o644)
  const asRoot = process.getuid?.() === 0
  const result = spawnSync(process.execPath, [script], {
    env: { PATH: process.env.PATH, HOME: base },
    encoding: 'utf8',
    timeout: 60_000,
    // nobody/nogroup: a user that owns nothing here.
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  })
  expect(result.status, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as { folder: Failure | null; keyFile: Failure | null }
}

describe('a data folder KnowHub may not write', () => {
  it('answers config_error naming the folder and the fix, and leaves nothing behind', async () => {
    chmodSync(base, 0o755)
    const data = join(base, 'data')
    mkdirSync(data)
    chmodSync(data, 0o555)
    const { folder, keyFile } = await openAsOther(data)
    // The store's folder (<data>/db) and the key file (<data>/secret.key): each a coded error, never internal_error.
    expect(folder).toMatchObject({ code: 'config_error', details: { folder: join(data, 'db'), errno: 'EACCES' } })
    expect(folder!.message).toContain(`KnowHub cannot use its data folder ${join(data, 'db')}`)
    expect(keyFile).toMatchObject({ code: 'config_error', details: { folder: data, errno: 'EACCES' } })
    for (const error of [folder!, keyFile!]) expect(error.message).toContain('KNOWHUB_DATA_DIR')
    expect(keyFile!.message).toContain(`KnowHub cannot use its data folder ${data}`)
    expect(readdirSync(data)).toEqual([])
  })
})
