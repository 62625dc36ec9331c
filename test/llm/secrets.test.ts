/**
 * The secret detector (src/llm/secrets.ts): secretlint's recommended rules plus KnowHub's own,
 * over real-looking credentials of every kind issue 27 lists. Each case says what must vanish
 * and what must stay readable (a cookie's name, a URL's host, the rest of the line).
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { findSecrets, redactDeep, redactSecrets } from '../../src/llm/secrets.js'
import { alnum, awsSecret, secretCases } from '../helpers/secret-cases.js'

describe('secret detection', () => {
  it.each(secretCases().map((c) => [c.kind, c] as const))('redacts %s and keeps the rest', async (_kind, c) => {
    const { text, found } = await redactSecrets(c.text)
    for (const secret of c.secrets) expect(text).not.toContain(secret)
    for (const kept of c.keep) expect(text).toContain(kept)
    expect(found.length).toBeGreaterThanOrEqual(1)
    for (const f of found) expect(c.text.slice(f.start, f.end)).toBe(f.value)
  })

  it.each(secretCases().map((c) => [c.kind, c] as const))('redacts %s inside JSON-escaped data and keeps the JSON valid', async (_kind, c) => {
    // Prompts carry data as JSON: lines become one line with \n in it, quotes become \".
    const json = JSON.stringify({ feedback: c.text, note: 'plain' })
    const { text } = await redactSecrets(json)
    for (const secret of c.secrets) expect(text).not.toContain(JSON.stringify(secret).slice(1, -1))
    expect(JSON.parse(text)).toMatchObject({ note: 'plain' })
  })

  it('uses secretlint’s preset (a rule id of it shows) beside KnowHub’s own rules', async () => {
    const found = await findSecrets(`aws_secret_access_key = ${awsSecret()}\nghp_${alnum(36)}\nkh_${randomBytes(32).toString('base64url')}`)
    const rules = new Set(found.map((f) => f.rule))
    expect([...rules].some((r) => r.startsWith('@secretlint/'))).toBe(true)
    expect(rules.has('knowhub/knowhub-token')).toBe(true)
  })

  it('cannot be switched off by a secretlint-disable comment in the text', async () => {
    const kh = `kh_${randomBytes(32).toString('base64url')}`
    const text = `// secretlint-disable\n/* secretlint-disable */\ntoken ${kh}\nghp_${alnum(36)}`
    const { text: out } = await redactSecrets(text)
    expect(out).not.toContain(kh)
    expect(out).not.toMatch(/ghp_[A-Za-z0-9]{36}/u)
  })

  it('leaves ordinary prose, ids, hashes and markers alone', async () => {
    const prose = [
      'The token is valid for two hours; the password policy asks for 12 characters.',
      'Entry knowledge-20260101120000-abcd merged into knowledge-20260102120000-efgh.',
      'git commit 4e8ace3b1f0d9c8e7a6b5c4d3e2f1a0b9c8d7e6f fixed it',
      'password: [SECRET_1] and the cookie [SECRET_2]',
      'Run pnpm install, then docker build -t shop:1.4.2 .',
    ].join('\n')
    expect((await redactSecrets(prose)).text).toBe(prose)
  })

  it("ends a value where the value ends: a sentence's full stop after a password, Chinese prose after a cookie", async () => {
    const password = `Tr0ub${alnum(8)}`
    const said = await redactSecrets(`The password is ${password}. Then log in.`)
    expect(said.found.map((f) => f.value)).toContain(password)
    expect(said.text).toMatch(/\[redacted\]\. Then log in\.$/u)
    const dotted = await findSecrets(`password: ${password}.v2 ok`)
    expect(dotted.map((f) => f.value)).toContain(`${password}.v2`)
    const cookie = alnum(24)
    const zh = await redactSecrets(`请求头 Cookie: sid=${cookie}，然后再登录后台。`)
    expect(zh.found.map((f) => f.value)).toEqual([cookie])
    expect(zh.text).toContain('，然后再登录后台。')
    expect(zh.text).not.toContain(cookie)
  })

  it('redacts every string of a structured answer', async () => {
    const kh = `kh_${randomBytes(32).toString('base64url')}`
    const answer = { content: `use ${kh}`, tags: { note: `Bearer ${alnum(30)}` }, n: 3, list: ['plain', `pass=${kh}`] }
    const out = await redactDeep(answer)
    expect(JSON.stringify(out)).not.toContain(kh)
    expect(out).toMatchObject({ content: 'use [redacted]', n: 3, list: ['plain', expect.stringContaining('[redacted]')] })
    expect(out.tags.note).toBe('Bearer [redacted]')
  })
})
