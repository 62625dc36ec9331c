/**
 * The README's quick start, run as written by a newcomer: a fresh clone (the tracked files of
 * this repository copied into a temp folder), `npm install` with no compiler on the PATH (every
 * compiler a stand-in that fails and records the call), no `npm_config_nodedir`, a fresh HOME and
 * no network (npm offline, from this machine's npm cache that `npm ci` filled); then the real
 * `npm start`, every command in order while it serves — the CLI as the README types it
 * (`./knowhub …`), the HTTP examples through curl — the README's TypeScript example, the Python
 * client installed as docs/python.md says (in a new venv, no package index) with its first
 * examples, and the dashboard in Chromium signed in with the token the README makes for the
 * reader, showing what they saved. The only edits are the port (a free one instead of 8420, through KNOWHUB_PORT and
 * in the curl lines) and the placeholder `<ENTRY_ID>` (the id the first `save` printed). A
 * command the test has no expectation for fails it: when the README changes, this test changes
 * with it. Everything the quick start wrote in the checkout is covered by `.gitignore`.
 *
 * The clone gets this checkout's built dist/ beside its sources, so `prepare` finds it up to date
 * (scripts/prepare.mjs) instead of building it again: the build (tsc, esbuild, the PGlite
 * template) compiles nothing natively and runs in every `npm ci`; what a compiler-less machine
 * breaks on is a dependency's install script, which this install runs.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../helpers/browser.js'
import {
  checkOf,
  compilerAttempts,
  freePort,
  noCompilerBin,
  ONE_LINE_NOTE,
  PLACEHOLDER_ID,
  quickStartCommands,
  ROOT,
  startAsUser,
  type QuickStartState,
  type Ran,
  type StartedServer,
} from '../helpers/readme.js'

const dirs: string[] = []
let server: StartedServer | undefined
let browser: Browser | undefined
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A fresh clone: the files git tracks here, copied, and this checkout's built dist/. */
function cloneInto(dir: string): void {
  const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  expect(tracked.status, tracked.stderr).toBe(0)
  for (const file of tracked.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    cpSync(join(ROOT, file), join(dir, file))
  }
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true })
}

/** This machine's npm cache (where `npm ci` put the packages), asked of npm itself. */
function machineNpmCache(): string {
  const asked = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' })
  return asked.stdout.trim()
}

describe('README quick start', () => {
  it('runs as written: npm install without a compiler, npm start, every CLI and curl example, the dashboard signed in', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const commands = quickStartCommands(readme)
    expect(commands.slice(0, 3)).toEqual(['npm install', 'npm start', 'npm test'])

    const base = mkdtempSync(join(tmpdir(), 'knowhub-readme-'))
    dirs.push(base)
    const dir = join(base, 'knowhub')
    mkdirSync(dir)
    cloneInto(dir)
    const before = new Set(readdirSync(dir))
    const port = await freePort()
    // The machine's own node, npm and curl, behind stand-ins for every compiler; a fresh HOME;
    // npm offline from the machine's cache; no npm_config_nodedir (nothing inherited).
    const env: NodeJS.ProcessEnv = {
      PATH: `${noCompilerBin(base)}:${process.env.PATH}`,
      HOME: base,
      npm_config_cache: machineNpmCache(),
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      KNOWHUB_PORT: String(port),
    }

    const install = spawnSync('bash', ['-c', commands[0]!], { cwd: dir, env, encoding: 'utf8', timeout: 600_000 })
    const installOutput = `${install.stdout}\n${install.stderr}`
    expect(install.status, installOutput).toBe(0)
    expect(compilerAttempts(base), installOutput).toEqual([])
    expect(installOutput).not.toMatch(/gyp|install-scripts|allowScripts/)
    expect(existsSync(join(base, '.cache', 'node-gyp')), 'node-gyp fetched the Node headers').toBe(false)

    server = await startAsUser(commands[1]!, dir, env)

    const state: QuickStartState = { ids: [], myToken: '', aliceToken: '' }
    // Placeholders are marked as such (`<ENTRY_ID>`), never an id that looks real.
    expect(commands.filter((c) => /knowledge-\d{14}-/.test(c))).toEqual([])
    expect(commands.filter((c) => c.includes(PLACEHOLDER_ID)).length).toBeGreaterThan(0)
    for (const written of commands.slice(3)) {
      const command = written.replaceAll('localhost:8420', `localhost:${port}`).replaceAll(PLACEHOLDER_ID, state.ids[0] ?? PLACEHOLDER_ID)
      const result = spawnSync('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 })
      const ran: Ran = { command, code: result.status, stdout: result.stdout, stderr: result.stderr }
      expect(ran.code, `${command}\n${ran.stderr}`).toBe(0)
      checkOf(command)(ran, state)
      // Each command that needs the data says, in one line, that it runs on the server.
      if (command.startsWith('./knowhub') && !/--help|--version/.test(command)) expect(ran.stderr, command).toMatch(ONE_LINE_NOTE)
    }
    expect(state.ids).toHaveLength(2)

    // The README's TypeScript example, as written, against the same server (now in token mode:
    // alice's token is the reader's KNOWHUB_TOKEN); `knowhub/client` resolves to this package.
    const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
    expect(examples.length).toBeGreaterThan(0)
    mkdirSync(join(dir, '.test-tmp'))
    for (const [i, example] of examples.entries()) {
      const file = join(dir, '.test-tmp', `readme-example-${i}.mts`)
      writeFileSync(file, example.replaceAll('127.0.0.1:8420', `127.0.0.1:${port}`))
      const result = spawnSync(join(dir, 'node_modules/.bin/tsx'), [file], {
        cwd: dir,
        env: { ...env, KNOWHUB_TOKEN: state.aliceToken },
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(result.status, `${example}\n${result.stderr}`).toBe(0)
    }

    // The Python client as docs/python.md installs it (its pip line, offline, in a new venv) and its
    // first examples as written, against the same server with alice's token.
    const pythonDoc = readFileSync(join(ROOT, 'docs', 'python.md'), 'utf8')
    const pip = /^pip install (\S+)/m.exec(pythonDoc)
    expect(pip, 'docs/python.md: pip install …').not.toBeNull()
    const venv = join(base, 'venv')
    const made = spawnSync('python3', ['-m', 'venv', venv], { env, encoding: 'utf8', timeout: 120_000 })
    expect(made.status, made.stderr).toBe(0)
    const pipRun = spawnSync(join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--no-index', '--disable-pip-version-check', pip![1]!], {
      cwd: dir,
      env,
      encoding: 'utf8',
      timeout: 300_000,
    })
    expect(pipRun.status, `${pipRun.stdout}\n${pipRun.stderr}`).toBe(0)
    const pythonExamples = [...pythonDoc.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!).slice(0, 3)
    expect(pythonExamples.length).toBe(3)
    for (const example of pythonExamples) {
      const ran = spawnSync(join(venv, 'bin', 'python'), ['-c', example], {
        cwd: base,
        env: { ...env, KNOWHUB_URL: `http://127.0.0.1:${port}`, KNOWHUB_TOKEN: state.aliceToken },
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(ran.status, `${example}\n${ran.stderr}`).toBe(0)
    }

    // The dashboard, signed in with the reader's own token, shows what they saved.
    browser = await launchChromium()
    const page = await browser.newPage()
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.getByLabel('API token').fill(state.myToken)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation', { name: 'Dashboard' }).waitFor()
    const search = async (q: string): Promise<string[]> => {
      await page.goto(`http://127.0.0.1:${port}/#/search?q=${encodeURIComponent(q)}`)
      await page.locator('#results .count').waitFor()
      return page.locator('#results li.result .task').allTextContents()
    }
    expect(await search('selenium login blocked as a bot')).toContain('Log in to site A with Selenium')
    expect(await search('pnpm docker')).toEqual(['Deploy with pnpm in Docker'])
    expect(await search('用户喜欢什么样的编码风格')).toContain('记录用户的编码偏好')

    // What the quick start wrote in the checkout is ignored by git.
    // (A folder is named with its trailing slash: git's folder patterns, `/.knowhub/`, match only those.)
    const written = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => !before.has(entry.name))
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    expect(written).toEqual(expect.arrayContaining(['.knowhub/', 'backup.jsonl', 'node_modules/']))
    const ignored = spawnSync('git', ['check-ignore', '--no-index', ...written], { cwd: ROOT, encoding: 'utf8' })
    expect(ignored.stdout.trim().split('\n').sort()).toEqual(written.sort())
  }, 900_000)
})
