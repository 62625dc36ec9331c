/**
 * The grounding rule (src/knowledge/grounding.ts, issue 43), case by case in English and in
 * Chinese: what a small model writes from a conversation, supported or not. The rule is pure
 * (the one text analysis of src/core/text); the embedding similarity is a function it is given,
 * here a fixed one (the real model's is exercised by test/models/learning-loop.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { checkGrounding, namesIn, numbersIn, supportingSentences, ungroundedReason } from '../../src/knowledge/grounding.js'

const turns = (...texts: string[]) => texts.map((text, index) => ({ index, text }))
const judge = async (text: string, ...sources: string[]) => checkGrounding(text, turns(...sources))

describe('the grounding rule', () => {
  it.each([
    ['a paraphrase of the user', 'The user prefers pnpm over npm.', ['I always use pnpm, never npm.']],
    [
      'the turn itself, copied',
      'I always use pnpm, never npm. Our CI runs on GitHub Actions.',
      ['I always use pnpm, never npm. Our CI runs on GitHub Actions.'],
    ],
    [
      'a strategy over two turns',
      'Run corepack enable before pnpm install in Docker builds.',
      ['The Docker build failed: pnpm was missing.', 'Running corepack enable before pnpm install fixed it.'],
    ],
    ['Chinese, reworded', '用户偏好使用 pnpm 而不是 npm', ['我平时都用 pnpm，不用 npm。']],
    ['Chinese, a change of tool', '用户现在改用 Python 3.12 了', ['我们之前用 Java，现在改用 Python 3.12 了。']],
    ['Chinese, a meeting', '每周五下午三点开周会', ['每周五下午三点我们开周会。']],
    ['English from Chinese, names and numbers holding', 'The team now uses Python 3.12.', ['我们之前用 Java，现在改用 Python 3.12 了。']],
    [
      'a secret marker and a redaction',
      'Log in with password [SECRET_1] and token [redacted].',
      ['Log in with the password [SECRET_1] and the token [SECRET_2].'],
    ],
  ])('supports %s', async (_name, text, sources) => {
    const verdict = await judge(text, ...sources)
    expect(verdict).toMatchObject({ supported: true })
    expect(verdict.sources.length).toBeGreaterThan(0)
  })

  it.each([
    ['an invented name', 'The user prefers pnpm for monorepos in Docker.', ['I always use pnpm, never npm.'], 'names', ['docker']],
    ['a changed number', 'The API rate limit is 500 requests per minute.', ['Our API rate limit is 300 requests per minute.'], 'numbers', ['500']],
    ['a guess', 'The server is in Frankfurt.', ['I think maybe the server is in Frankfurt, not sure.'], 'no_source', []],
    ['small talk', 'The weather is nice today.', ['Hi! The weather is really nice today.'], 'no_source', []],
    ['a Chinese guess', '测试服务器在上海机房', ['测试服务器可能在上海机房，我不太确定。'], 'no_source', []],
    ['Chinese small talk', '用户住在上海', ['你好！今天天气不错。'], 'no_source', []],
    [
      'words the turn never said',
      'Cache the node modules layer and prune dev dependencies after the install.',
      ['Run pnpm install in the image.'],
      'coverage',
      [],
    ],
    ['Chinese words the turn never said', '部署前需要先备份数据库并通知运维值班人员', ['上线之前要先跑数据库迁移脚本。'], 'coverage', []],
    ['nothing of its own', 'The user prefers it.', ['I use pnpm.'], 'empty', []],
  ])('does not support %s', async (_name, text, sources, reason, missing) => {
    const verdict = await judge(text, ...sources)
    expect(verdict).toMatchObject({ supported: false, reason })
    for (const word of missing) expect(verdict.missing).toContain(word)
  })

  it('lets a semantic model vouch for a paraphrase with half the coverage, never for a missing name or number', async () => {
    const text = 'Deployments need the database migration script to run first.'
    const source = turns('Before going live always run the database migration, or the service will not start.')
    const without = await checkGrounding(text, source)
    expect(without).toMatchObject({ supported: false, reason: 'coverage' })
    expect(without.coverage).toBeGreaterThanOrEqual(0.3)
    const similar = async () => 0.9
    expect(await checkGrounding(text, source, { similarity: similar })).toMatchObject({ supported: true, similarity: 0.9 })
    expect(await checkGrounding(text, source, { similarity: async () => 0.5 })).toMatchObject({ supported: false, similarity: 0.5 })
    expect(await checkGrounding('Deployments need migration 42 to run first.', source, { similarity: similar })).toMatchObject({
      supported: false,
      reason: 'numbers',
    })
  })

  it('reads the old content as knowledge when asked (evolve): its cautions support what they say', async () => {
    const old = turns('This might fail on Windows: run it in WSL.')
    expect(await checkGrounding('Run it in WSL: it might fail on Windows.', old)).toMatchObject({ supported: false, reason: 'no_source' })
    expect(await checkGrounding('Run it in WSL: it might fail on Windows.', old, { conversational: false })).toMatchObject({ supported: true })
  })

  it('names the turns that hold its words, fewest first', async () => {
    const verdict = await judge(
      'Run corepack enable before pnpm install.',
      'Hello!',
      'pnpm was missing in the build.',
      'Running corepack enable before pnpm install fixed it.',
    )
    expect(verdict.sources).toEqual([2])
  })

  it('finds numbers, names and the sentences that can support a fact', () => {
    expect(numbersIn('port 8,080 on v2.3, 2025-05-20')).toEqual(['8080', '2.3', '2025', '05', '20'])
    // A comma before anything but three digits separates numbers (Chinese text often has ASCII commas).
    expect(numbersIn('Android 最低版本提到 10,8 和 9 不再支持')).toEqual(['10', '8', '9'])
    expect(namesIn('The user moved CI to GitHub Actions on node:20.')).toEqual(['ci', 'github', 'actions', 'node:20'])
    expect(namesIn('用户改用 Python 了')).toEqual(['python'])
    expect(supportingSentences('Thanks! I use pnpm. Maybe Docker too? 我们用 Python 3.12。可能也用 Go。')).toEqual(['I use pnpm.', '我们用 Python 3.12。'])
  })

  it('says why in words', async () => {
    expect(ungroundedReason(await judge('Use Kubernetes with 3 replicas.', 'Use Kubernetes.'))).toBe('ungrounded: numbers not in the conversation (3)')
    expect(ungroundedReason(await judge('Use Kubernetes and Helm.', 'Use Kubernetes.'), 'the entries')).toBe('ungrounded: names not in the entries (helm)')
  })
})
