/**
 * `knowhub mcp` over stdio: the real CLI spawned with `node --import tsx`, driven by
 * the official MCP client (StdioClientTransport). Calls every tool.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const PROJECT = join(ROOT, 'test', 'fixtures', 'packs', 'scopes', 'project')

let dir: string
const clients: Client[] = []

async function spawnMcp(args: string[], data: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'test', 'mcp', 'run-cli.ts'), 'mcp', ...args],
    cwd: ROOT,
    env: {
      ...getDefaultEnvironment(),
      KNOWHUB_DATA_DIR: join(dir, data),
      KNOWHUB_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'),
      KNOWHUB_USER: 'dev',
      KNOWHUB_AGENT: 'research_agent',
      KNOWHUB_ORG: 'acme',
      KNOWHUB_LOG_LEVEL: 'info',
    },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'knowhub-stdio-test', version: '1.0.0' })
  await client.connect(transport)
  clients.push(client)
  return client
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('')
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-mcp-stdio-'))
})

afterAll(async () => {
  for (const client of clients) await client.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('knowhub mcp (stdio)', () => {
  it('serves every tool over stdio, with the pack catalog and pack resources', async () => {
    const client = await spawnMcp(['--project', PROJECT, '--no-user', '--scope', 'org:acme'], 'data-1')
    expect(client.getServerVersion()?.name).toBe('knowhub')
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(client.getServerVersion()?.version).toBe(pkg.version)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'agent_compact',
        'goal',
        'knowledge_batch_update',
        'knowledge_extract',
        'knowledge_list',
        'knowledge_pack_activate',
        'knowledge_pack_list',
        'knowledge_pack_resolve',
        'knowledge_save',
        'knowledge_search',
        'knowledge_slim',
        'knowledge_update',
        'resource_get',
        'user_profile',
        'resource_save',
        'get_knowledge',
        'save_knowledge',
      ].sort(),
    )
    expect(tools.find((t) => t.name === 'knowledge_pack_activate')!.description).toContain('<name>acme-product-brief</name>')

    const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult
      expect(result.isError, `${name}: ${text(result)}`).toBeFalsy()
      return result
    }

    const resource = await call('resource_save', {
      id: 'code/selenium/login',
      title: 'Selenium login',
      body: 'import undetected_chromedriver as uc',
      content_type: 'code',
    })
    expect(text(resource)).toBe('Saved resource code/selenium/login (code; scopes org:acme).')
    const saved = await call('knowledge_save', {
      task: 'Log in to site A with Selenium',
      content: 'undetected_chromedriver avoids bot checks',
      types: ['tool'],
      resource_ids: ['code/selenium/login'],
    })
    const entry = saved.structuredContent as { id: string; scopes: string[]; owner: string; source: { agent_id: string } }
    // Defaults from the command line and the configured principal (KNOWHUB_AGENT), not hard-coded.
    expect(entry).toMatchObject({ scopes: ['org:acme'], owner: 'agent:research_agent', source: { agent_id: 'research_agent' } })
    await call('knowledge_save', { task: 'Log in to site A with Selenium', content: 'undetected_chromedriver avoids bot checks', types: ['tool'] })

    expect(text(await call('knowledge_search', { query: 'selenium site A login' }))).toContain(`<knowledge_entry id="${entry.id}"`)
    expect(text(await call('knowledge_update', { knowledge_id: entry.id, add_helpful_case: { task: 'scrape', outcome: 'worked' } }))).toContain('helpful 1')
    expect(text(await call('knowledge_batch_update', { feedback_list: [{ knowledge_id: entry.id, is_helpful: true }] }))).toContain(
      'Recorded feedback on 1 of 1 entry.',
    )
    expect(text(await call('knowledge_list', { limit: 5 }))).toMatch(/^2 entries:/)
    expect(text(await call('knowledge_slim', { dry_run: true }))).toMatch(/^Dry run: 1 group/)
    expect(text(await call('resource_get', { id: 'code/selenium/login' }))).toContain('import undetected_chromedriver as uc')
    expect(text(await call('knowledge_pack_list', {}))).toContain('<available_knowledge_packs>')
    expect(text(await call('knowledge_pack_activate', { name: 'acme-product-brief' }))).toMatch(/^<knowledge_pack_guide name="acme-product-brief"/)
    expect(text(await call('knowledge_pack_resolve', { task: 'What is the enterprise price?', budget: 2000 }))).toContain(
      '<knowledge_pack name="acme-product-brief"',
    )

    const failed = (await client.callTool({ name: 'resource_get', arguments: { id: 'credentials/none' } })) as CallToolResult
    expect(failed.isError).toBe(true)
    expect(text(failed)).toBe('error [not_found]: No resource credentials/none')

    const guide = await client.readResource({ uri: 'knowhub-pack://acme-product-brief/KNOWLEDGE.md' })
    expect((guide.contents[0] as { text: string }).text).toMatch(/^<knowledge_pack_guide name="acme-product-brief"/)
    // Closing stdin stops the server, which closes the hub and exits.
    await client.close()
  })

  it('registers no activation tool when no pack is found', async () => {
    const client = await spawnMcp(['--project', join(dir, 'empty-project'), '--no-user'], 'data-2')
    const names = (await client.listTools()).tools.map((t) => t.name)
    // 10 knowledge tools (user_profile among them), seed 002's two names, the goal and agent_compact tools (the local backend has goal trees and agents).
    expect(names).toHaveLength(14)
    expect(names).not.toContain('knowledge_pack_activate')
  })
})

describe('knowhub mcp on a held embedded database', () => {
  it('says on stderr who holds it before exiting, instead of a silent closed connection', async () => {
    // Held by this (test) process, which serves nothing: the lock file names it.
    const data = join(dir, 'data-held')
    mkdirSync(data, { recursive: true })
    writeFileSync(join(data, 'db.lock'), JSON.stringify({ pid: process.pid, host: hostname(), started_at: '2026-11-23T00:00:00Z' }))
    const second = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'test', 'mcp', 'run-cli.ts'), 'mcp', '--no-packs'],
        { cwd: ROOT, env: { ...getDefaultEnvironment(), KNOWHUB_DATA_DIR: data, KNOWHUB_USER: 'dev' }, timeout: 60_000 },
        (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      )
    })
    expect(second.code).toBe(1)
    // stdout is the protocol channel: nothing there; the reason is on stderr.
    expect(second.stdout).toBe('')
    expect(second.stderr).toContain(`error [database_error]: The embedded database in ${data} is in use by process ${process.pid}`)
  }, 90_000)
})

describe('knowhub mcp --url (stdio in front of a running server)', () => {
  it('sends every knowledge call to the server as the token principal, and says clearly when the server is unreachable', async () => {
    const { openTestHub } = await import('../server/helpers.js')
    const t = await openTestHub()
    try {
      const { token } = await t.hub.tokens.create({ user: 'remote', org: 'acme', permissions: ['read', 'write'] })
      const running = await t.start()
      const client = await spawnMcp(['--url', running.url, '--token', token, '--no-packs'], 'unused')
      const saved = (await client.callTool({
        name: 'knowledge_save',
        arguments: { task: 'Rotate logs with logrotate', content: 'copytruncate keeps the file handle valid', types: ['tool'] },
      })) as CallToolResult
      expect(saved.isError, text(saved)).toBeFalsy()
      const id = (saved.structuredContent as { id: string }).id
      // Saved on the server, owned by the token's principal, shared with its org (seed 003's default), whatever KNOWHUB_AGENT says here.
      expect(await t.hub.knowledge.get(id, { user: 'remote', org: 'acme', permissions: ['read'] })).toMatchObject({
        owner: 'user:remote',
        scopes: ['org:acme'],
      })
      expect(text(await client.callTool({ name: 'knowledge_search', arguments: { query: 'logrotate copytruncate' } }))).toContain(id)
      const denied = (await client.callTool({
        name: 'knowledge_update',
        arguments: { knowledge_id: 'knowledge-20260101000000-zzzz', update_score: 4 },
      })) as CallToolResult
      expect(denied.isError).toBe(true)
      expect(text(denied)).toContain('not_found')
      await client.close()
      await running.close()
      const { runCli } = await import('../helpers/cli.js')
      const unreachable = await runCli('mcp', '--url', running.url, '--no-packs')
      expect(unreachable.code).not.toBe(0)
      expect(unreachable.stderr).toContain(`Cannot reach the KnowHub server at ${running.url}`)
    } finally {
      await t.close()
    }
  }, 60_000)
})
