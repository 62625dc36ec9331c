/**
 * The public surface of `knowhub/agent`: its runtime names are pinned, each has a JSDoc
 * @example, and the library never touches the console or process state.
 */
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as agent from '../../src/agent/index.js'
import { exportsWithoutExample } from '../helpers/examples.js'

const SRC = fileURLToPath(new URL('../../src/agent/', import.meta.url))
/** The wire shapes live in core (the client and the tools share them); knowhub/agent re-exports them. */
const SHAPES = ['agent.ts', 'goals.ts'].map((f) => fileURLToPath(new URL(`../../src/core/${f}`, import.meta.url)))
const sourceFiles = async (): Promise<string[]> => ((await readdir(SRC, { recursive: true })) as string[]).filter((f) => f.endsWith('.ts'))

describe('knowhub/agent public surface', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(agent).sort()).toEqual(PINNED)
  })

  it('documents every runtime export with a JSDoc @example', async () => {
    const files = [...(await sourceFiles()).map((f) => join(SRC, f)), ...SHAPES]
    const sources = await Promise.all(files.map(async (f) => readFile(f, 'utf8')))
    expect(exportsWithoutExample(Object.keys(agent), sources)).toEqual([])
  })

  it('library code never touches the console or process state', async () => {
    for (const file of await sourceFiles()) {
      const source = (await readFile(join(SRC, file), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
      expect(source, file).not.toMatch(/\bconsole\.|process\.(exit|exitCode|env|cwd)\b/)
    }
  })
})

const PINNED = [
  'AGENT_DEFAULTS_DIR',
  'AgentContextRequest',
  'AgentLanguage',
  'AgentName',
  'AssembleContextInput',
  'AssembledContext',
  'CompactInput',
  'CompactResult',
  'ContextMessage',
  'ContextPart',
  'ContextReport',
  'FunctionEntry',
  'FunctionIndex',
  'Goal',
  'GoalId',
  'GoalRequest',
  'GoalTree',
  'HistoryMessage',
  'PLACEHOLDERS',
  'TraceId',
  'buildFunctionIndex',
  'checkTemplate',
  'createAgentService',
  'findFunctions',
  'renderTemplate',
]
