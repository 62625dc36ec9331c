/**
 * The `tools` section of the config file (scopes, owner, agentId, submittedBy) sets the agent
 * tools' defaults on both transports: `knowhub mcp` over stdio (where flags win) and `/mcp` on
 * `knowhub start`. The real CLI is spawned with `node --import tsx` and driven by the SDK client.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KnowHubConfig } from '../../src/core/config.js'
import { toolDefaults } from '../../src/cli/tool-options.js'

const ROOT = join(import.meta.dirname, '..', '..')
const CLI = join(ROOT, 'test', 'mcp', 'run-cli.ts')
const TOOLS = { scopes: ['org:acme'], owner: 'org:acme', agentId: 'coder', submittedBy: 'ci-bot' }

let dir: string
let configFile: string
const clients: Client[] = []
const children: ChildProcess[] = []

function env(data: string): Record<string, string> {
  return {
    ...getDefaultEnvironment(),
    KNOWHUB_DATA_DIR: join(dir, data),
    KNOWHUB_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'),
    KNOWHUB_EMBEDDER: 'hashed',
    KNOWHUB_USER: 'dev',
    KNOWHUB_ORG: 'acme',
    KNOWHUB_AGENT: 'from_env',
  }
}

interface SavedEntry {
  scopes: string[]
  owner: string
  source: { agent_id: string; submitted_by: string }
}

async function save(client: Client): Promise<SavedEntry> {
  const result = (await client.callTool({
    name: 'knowledge_save',
    arguments: { task: 'Rotate API keys', content: 'Rotate keys every 90 days', types: ['strategy'] },
  })) as CallToolResult
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
  return result.structuredContent as unknown as SavedEntry
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-tool-defaults-'))
  configFile = join(dir, 'knowhub.config.json')
  writeFileSync(configFile, JSON.stringify({ tools: TOOLS }))
})

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  rmSync(dir, { recursive: true, force: true })
})

describe('tool defaults from the config file', () => {
  it('are part of the config schema, validated, and merged with flags (flags win)', () => {
    expect(KnowHubConfig.parse({}).tools).toEqual({})
    expect(KnowHubConfig.parse({ tools: TOOLS }).tools).toEqual(TOOLS)
    expect(KnowHubConfig.safeParse({ tools: { scopes: ['org acme'] } }).success).toBe(false)
    expect(KnowHubConfig.safeParse({ tools: { owner: 'public' } }).success).toBe(false)
    expect(toolDefaults(TOOLS)).toEqual({ scopes: ['org:acme'], owner: 'org:acme', agent_id: 'coder', submitted_by: 'ci-bot' })
    expect(toolDefaults(TOOLS, { scope: ['user:dev'], agentId: 'other' })).toEqual({
      scopes: ['user:dev'],
      owner: 'org:acme',
      agent_id: 'other',
      submitted_by: 'ci-bot',
    })
    // Nothing configured: nothing here (the tools ask the hub who the caller is: its org, its agent).
    expect(toolDefaults({}, { scope: [] })).toEqual({})
  })

  it('`knowhub mcp` (stdio) saves with the configured defaults, and its flags win', async () => {
    const connect = async (args: string[], data: string): Promise<Client> => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', CLI, '--config', configFile, 'mcp', '--no-packs', ...args],
        cwd: ROOT,
        env: env(data),
        stderr: 'pipe',
      })
      const client = new Client({ name: 'knowhub-tool-defaults', version: '1.0.0' })
      await client.connect(transport)
      clients.push(client)
      return client
    }
    const configured = await save(await connect([], 'stdio'))
    expect(configured).toMatchObject({ scopes: ['org:acme'], owner: 'org:acme', source: { agent_id: 'coder', submitted_by: 'ci-bot' } })
    await clients.pop()!.close()

    const flagged = await save(await connect(['--scope', 'user:dev', '--agent-id', 'flagged', '--submitted-by', 'me'], 'stdio'))
    expect(flagged).toMatchObject({ scopes: ['user:dev'], owner: 'org:acme', source: { agent_id: 'flagged', submitted_by: 'me' } })
  })

  it('`/mcp` on `knowhub start` saves with the configured defaults', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, '--config', configFile, 'start', '--port', '0', '--no-packs'], {
      cwd: ROOT,
      env: { ...env('http'), KNOWHUB_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    const url = await new Promise<string>((resolve, reject) => {
      let out = ''
      let err = ''
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        const match = /listening on (http:\/\/\S+?) /.exec(out)
        if (match) resolve(match[1]!)
      })
      child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()))
      child.once('exit', (code) => reject(new Error(`knowhub start exited (${code}): ${err}`)))
    })
    const client = new Client({ name: 'knowhub-tool-defaults-http', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)))
    clients.push(client)
    expect(await save(client)).toMatchObject({ scopes: ['org:acme'], owner: 'org:acme', source: { agent_id: 'coder', submitted_by: 'ci-bot' } })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  })
})
