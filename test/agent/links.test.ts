/**
 * No link leads out of a local agent folder (issue #27): symbolic and hard links at the fixed
 * files, the template, the folder itself, a folder on the way to a named file, the function
 * index and compact_history are refused with a diagnostic naming them, and nothing outside the
 * folder is read or written. A read creates no file and no folder. Real PGlite (the hub on a
 * memory:// database), real folders in a temp dir, the LLM a local OpenAI-compatible stub.
 */
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { rejection } from '../helpers/errors.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'

const PASSWD = 'root:x:0:0:root:/root:/bin/bash'
let base: string
let home: string
let outside: string
let hub: KnowHub
let stub: OpenAIStub
const me = { user: 'ann', org: 'acme', permissions: ['read' as const, 'write' as const] }
const history = Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} `.repeat(80) })) as never

beforeAll(async () => {
  stub = await startOpenAIStub({ chat: () => '## Decisions\n- new memory' })
  base = mkdtempSync(join(tmpdir(), 'knowhub-agent-links-'))
  hub = await openKnowHub(
    {
      dataDir: 'memory://agent-links',
      embedder: { provider: 'hashed', dimension: 64 },
      llm: { url: stub.url, model: 'm', retries: 0 },
      agent: { home: join(base, 'home') },
    },
    { packs: false },
  )
})
afterAll(async () => {
  await hub?.close()
  await stub?.close()
  rmSync(base, { recursive: true, force: true })
})
beforeEach(() => {
  rmSync(join(base, 'home'), { recursive: true, force: true })
  rmSync(join(base, 'outside'), { recursive: true, force: true })
  home = join(base, 'home')
  outside = join(base, 'outside')
  mkdirSync(join(home, 'x'), { recursive: true })
  mkdirSync(outside, { recursive: true })
  writeFileSync(join(outside, 'passwd'), PASSWD)
})

const context = (agent = 'x', extra: Record<string, unknown> = {}) => hub.agent.assembleContext({ agent, principal: me, ...extra })

describe('links under a local agent folder', () => {
  it('knowledge.md -> /etc/passwd (symbolic link) is refused, naming the file; nothing of it is read', async () => {
    symlinkSync('/etc/passwd', join(home, 'x', 'knowledge.md'))
    const error = await rejection(context())
    expect(error.code).toBe('validation_error')
    expect(error.message).toBe('"knowledge.md" is refused: it is a symbolic link (links never lead out of an agent folder)')
    expect(JSON.stringify(error)).not.toContain('root:')
    expect(existsSync(join(home, 'x', 'knowledge_function_index.json'))).toBe(false)
  })

  it('a hard link to a file outside the folder is refused (nlink > 1)', async () => {
    linkSync(join(outside, 'passwd'), join(home, 'x', 'knowledge.md'))
    const error = await rejection(context())
    expect(error.code).toBe('validation_error')
    expect(error.message).toMatch(/^"knowledge\.md" is refused: it has 2 hard links/)
    expect(JSON.stringify(error)).not.toContain('root:')
  })

  it('every fixed file and the template: a link is refused, a real file is read', async () => {
    for (const name of ['self_awareness.md', 'system_prompt.md', 'compact.md']) {
      symlinkSync(join(outside, 'passwd'), join(home, 'x', name))
      expect((await rejection(context())).message, name).toBe(`"${name}" is refused: it is a symbolic link (links never lead out of an agent folder)`)
      rmSync(join(home, 'x', name))
      linkSync(join(outside, 'passwd'), join(home, 'x', name))
      expect((await rejection(context())).message, name).toMatch(new RegExp(`^"${name.replace('.', '\\.')}" is refused: it has 2 hard links`))
      rmSync(join(home, 'x', name))
    }
    writeFileSync(join(home, 'x', 'knowledge.md'), '## @own: mine\n')
    const { messages } = await context()
    expect(messages[0]!.content).toContain('@own')
  })

  it('a linked agent folder is refused, and the index is never written through it', async () => {
    writeFileSync(join(outside, 'knowledge.md'), '## @evil: planted\n')
    symlinkSync(outside, join(home, 'linked'))
    const error = await rejection(context('linked'))
    expect(error.message).toBe('The agent folder "linked" is refused: it is a symbolic link (links never lead out of an agent folder)')
    expect((await rejection(hub.agent.indexFunctions({ agent: 'linked' }))).code).toBe('validation_error')
    expect(readdirSync(outside).sort()).toEqual(['knowledge.md', 'passwd'])
  })

  it('a named file through a linked folder, or a link inside the folder, is refused', async () => {
    writeFileSync(join(outside, 'style.md'), 'outside style')
    symlinkSync(outside, join(home, 'x', 'skills'))
    expect((await rejection(context('x', { knowledgeFiles: ['skills/style.md'] }))).message).toContain('links outside the agent folder')
    writeFileSync(join(home, 'x', 'real.md'), 'inside')
    symlinkSync(join(home, 'x', 'real.md'), join(home, 'x', 'alias.md'))
    expect((await rejection(context('x', { knowledgeFiles: ['alias.md'] }))).message).toBe(
      '"alias.md" is refused: it is a symbolic link (links never lead out of an agent folder)',
    )
  })

  it('the index written over a link replaces the link: the file it pointed to is untouched', async () => {
    writeFileSync(join(outside, 'target.json'), 'do not overwrite')
    symlinkSync(join(outside, 'target.json'), join(home, 'x', 'knowledge_function_index.json'))
    const { report } = await context()
    expect(report.function_index).toMatchObject({ path: join(home, 'x', 'knowledge_function_index.json'), written: true })
    expect(readFileSync(join(outside, 'target.json'), 'utf8')).toBe('do not overwrite')
    expect(lstatSync(join(home, 'x', 'knowledge_function_index.json')).isSymbolicLink()).toBe(false)
  })

  it('compaction never writes through a linked compact_history or compact.md', async () => {
    writeFileSync(join(home, 'x', 'compact.md'), 'old memory')
    symlinkSync(outside, join(home, 'x', 'compact_history'))
    const error = await rejection(hub.agent.compact({ agent: 'x', history, threshold: 500 }, me))
    expect(error.message).toBe('"compact_history" is refused: it is a symbolic link (links never lead out of an agent folder)')
    expect(readdirSync(outside)).toEqual(['passwd'])
    expect(readFileSync(join(home, 'x', 'compact.md'), 'utf8')).toBe('old memory')
    rmSync(join(home, 'x', 'compact_history'))
    rmSync(join(home, 'x', 'compact.md'))
    symlinkSync(join(outside, 'passwd'), join(home, 'x', 'compact.md'))
    expect((await rejection(hub.agent.compact({ agent: 'x', history, threshold: 500 }, me))).message).toContain('"compact.md" is refused')
    expect(readFileSync(join(outside, 'passwd'), 'utf8')).toBe(PASSWD)
  })

  it('a read creates no file and no folder: 50 contexts of agents without a folder leave the home as it was', async () => {
    const before = readdirSync(home)
    for (let i = 0; i < 50; i++) {
      const { report } = await context(`ghost${i}`)
      expect(report.function_index.written).toBe(false)
    }
    // Regenerating the index of an agent without a folder creates none either: it says so.
    const index = await rejection(hub.agent.indexFunctions({ agent: 'ghost' }))
    expect(index.code).toBe('not_found')
    expect(index.message).toContain('The agent folder "ghost" does not exist')
    expect(readdirSync(home)).toEqual(before)
    expect(readdirSync(join(home, 'x'))).toEqual([])
  })
})
