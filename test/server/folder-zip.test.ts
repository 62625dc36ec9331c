/**
 * Issue 39 (Medium): a folder zip is bounded before it is trusted. On ac1c97e a 2 MB zip of
 * 2,000 MiB of spaces, its size fields patched to 10, froze the server for 18 s before a reader
 * got its 403. Here, against a real server on loopback: the right to write is checked before
 * anything is inflated; the zip's real output is counted off the event loop and refused at the
 * documented limit; `/healthz` answers meanwhile; and entries that climb (`..`), are absolute,
 * are links, or are not UTF-8 are refused by name instead of dropped or mangled. The API route
 * and the dashboard's (`/ui/knowledge/folder/import`) alike.
 */
import { spawn } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { loadavg } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unzipFolder, zipFolder } from '../../src/knowledge/folder/archive.js'
import { openDashboardHub, type DashboardHub } from '../dashboard/helpers.js'
import { LINK_ATTRIBUTES, deflated, rawZip, spaces, zipOf } from '../helpers/zip.js'

/** The hostile upload of the finding: 2,000 MiB of spaces in about 2 MB, declaring 10 bytes. */
const BOMB = rawZip([{ name: 'global/tools.json', data: spaces(2000), declaredSize: 10 }])

let t: DashboardHub
let url = ''
const tokens = { reader: '', writer: '' }
const figures: string[] = []

beforeAll(async () => {
  t = await openDashboardHub({ config: { embedder: { provider: 'hashed', dimension: 64 } } })
  url = t.server.url
  tokens.reader = (await t.hub.tokens.create({ user: 'rita', org: 'acme', permissions: ['read'] })).token
  tokens.writer = (await t.hub.tokens.create({ user: 'will', org: 'acme', permissions: ['read', 'write'] })).token
  // Warm: the first request of a process compiles the routes' code.
  await upload('/api/knowledge/folder/import', zipOf('global/tools.json', '[]'), { authorization: `Bearer ${tokens.reader}` })
})
afterAll(async () => {
  if (figures.length > 0)
    console.log(`folder zip bomb (${BOMB.length} bytes, 2,000 MiB of spaces declared as 10 bytes), load ${loadavg()[0]!.toFixed(2)}:\n${figures.join('\n')}`)
  await t?.close()
})

interface Upload {
  status: number
  body: { error?: { code: string; message: string }; applied?: boolean }
  /** The round trip as this test sees it (the test's client shares the process with the server). */
  ms: number
  /** The server's own time for the request, body read included (its request log's `duration_ms`). */
  serverMs: number
}

let uploads = 0
async function upload(path: string, zip: Uint8Array, headers: Record<string, string>): Promise<Upload> {
  const requestId = `zip-upload-${++uploads}`
  const started = performance.now()
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip', 'x-request-id': requestId, ...headers },
    body: zip,
  })
  const body = (await response.json()) as Upload['body']
  const roundTrip = performance.now() - started
  const logged = t.logs.map((line) => JSON.parse(line) as { request_id?: string; duration_ms?: number }).find((l) => l.request_id === requestId)
  return { status: response.status, body, ms: roundTrip, serverMs: logged?.duration_ms ?? Number.NaN }
}

/**
 * A client in another process that asks `/healthz` back to back until told to stop, then prints
 * each probe's start (ms since the epoch) and latency: the server's responsiveness, without the
 * test's own client on the same event loop.
 */
const PROBER = `
const url = process.argv[1]
const probes = []
let stop = false
process.stdin.on('data', () => (stop = true))
;(async () => {
  while (!stop) {
    const at = Date.now()
    const started = performance.now()
    await (await fetch(url + '/healthz')).arrayBuffer()
    probes.push([at, performance.now() - started])
    if (probes.length === 1) process.stderr.write('ready\\n')
  }
  process.stdout.write(JSON.stringify(probes))
  process.exit(0)
})()
`

interface Probed {
  upload: Upload
  /** Latencies of the probes in flight while the upload was. */
  during: number[]
  /** Latencies of the probes before it (the same prober, the same machine's load). */
  before: number[]
}

/** Uploads `zip` while another process probes `/healthz`: ~300 ms of probes first, then the upload. */
async function uploadWhileProbing(path: string, zip: Uint8Array, headers: Record<string, string>): Promise<Probed> {
  const child = spawn(process.execPath, ['-e', PROBER, url], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  await new Promise<void>((resolve) => child.stderr.once('data', () => resolve()))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const from = Date.now()
  const answer = await upload(path, zip, headers)
  const to = Date.now()
  // A few more probes after the answer, so that one in flight at the end is counted.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const closed = new Promise((resolve) => child.once('close', resolve))
  child.stdin.end('stop')
  await closed
  const probes = JSON.parse(out) as [number, number][]
  const during = probes.filter(([at, latency]) => at + latency >= from && at <= to).map(([, latency]) => latency)
  const before = probes.filter(([at, latency]) => at + latency < from).map(([, latency]) => latency)
  return { upload: answer, during, before }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (value: number) => `${value.toFixed(1)} ms`
const health = ({ during, before }: Probed) =>
  `/healthz median ${ms(median(during))}, max ${ms(Math.max(...during))} (${during.length} probes; before the upload: median ${ms(median(before))})`

/**
 * /healthz while a hostile upload is in flight. The goal is 100 ms; on a loaded 2-core machine the
 * prober itself waits for a core, so the median is held to 100 ms or 3 times the same prober's median
 * just before, and the slowest probe to 1 s: ac1c97e held every probe for the whole inflation (7-18 s).
 */
function expectResponsive(probed: Probed): void {
  expect(median(probed.during)).toBeLessThanOrEqual(Math.max(100, 3 * median(probed.before)))
  expect(Math.max(...probed.during)).toBeLessThan(1000)
}

async function signIn(token: string): Promise<Record<string, string>> {
  const session = await fetch(`${url}/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ token }),
  })
  expect(session.status).toBe(200)
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!
  const me = (await (await fetch(`${url}/ui/me`, { headers: { cookie } })).json()) as { csrf: string }
  return { cookie, 'x-csrf-token': me.csrf, origin: url }
}

describe('a folder zip is bounded before it is trusted (issue 39)', () => {
  it('a reader gets 403 before anything is inflated: within 1 s, not after the 7-18 s of ac1c97e', async () => {
    const probed = await uploadWhileProbing('/api/knowledge/folder/import', BOMB, { authorization: `Bearer ${tokens.reader}` })
    const answer = probed.upload
    figures.push(`reader:  403 in ${ms(answer.serverMs)} (round trip ${ms(answer.ms)}); ${health(probed)}`)
    expect(answer.status).toBe(403)
    expect(answer.body.error?.code).toBe('forbidden')
    expect(answer.serverMs).toBeLessThan(1000)
    expectResponsive(probed)
  })

  it('a writer`s upload that inflates past the limit is refused, naming the entry, and /healthz answers meanwhile', async () => {
    const probed = await uploadWhileProbing('/api/knowledge/folder/import', BOMB, { authorization: `Bearer ${tokens.writer}` })
    const answer = probed.upload
    figures.push(`writer:  413 in ${ms(answer.serverMs)} (round trip ${ms(answer.ms)}); ${health(probed)}`)
    expect(answer.status).toBe(413)
    expect(answer.body.error).toMatchObject({ code: 'too_large', message: expect.stringContaining('"global/tools.json" inflates past 67108864 bytes') })
    // The goal is 1 s, printed above (0.27-0.72 s at load 9-10); the bound leaves room for the
    // machine's load and stays well under ac1c97e's 7-18 s.
    expect(answer.serverMs).toBeLessThan(3000)
    expectResponsive(probed)
  })

  it('four hostile uploads at once: each refused, /healthz still answers', async () => {
    const headers = { authorization: `Bearer ${tokens.writer}` }
    const started = performance.now()
    const [first, ...rest] = await Promise.all([
      uploadWhileProbing('/api/knowledge/folder/import', BOMB, headers),
      ...Array.from({ length: 3 }, () => upload('/api/knowledge/folder/import', BOMB, headers)),
    ])
    const wall = performance.now() - started
    const slowest = Math.max(...[first.upload, ...rest].map((a) => a.serverMs))
    figures.push(`4 at once: all refused in ${ms(wall)} (the slowest in ${ms(slowest)} on the server); ${health(first)}`)
    for (const answer of [first.upload, ...rest]) expect(answer.status).toBe(413)
    expect(slowest).toBeLessThan(5000)
    expectResponsive(first)
  })

  it('the dashboard`s route has the same bounds: a reader`s session gets 403, a writer`s 413', async () => {
    const reader = await upload('/ui/knowledge/folder/import', BOMB, await signIn(tokens.reader))
    const writer = await upload('/ui/knowledge/folder/import', BOMB, await signIn(tokens.writer))
    figures.push(`dashboard: reader ${reader.status} in ${ms(reader.serverMs)}, writer ${writer.status} in ${ms(writer.serverMs)}`)
    expect([reader.status, reader.body.error?.code]).toEqual([403, 'forbidden'])
    expect([writer.status, writer.body.error?.code]).toEqual([413, 'too_large'])
    expect(reader.serverMs).toBeLessThan(1000)
    expect(writer.serverMs).toBeLessThan(3000)
  })

  describe('entries are refused by name, and nothing is imported', () => {
    const good = { name: 'users/will/habits.json', data: deflated('[{"task":"t","content":"c"}]'), plain: Buffer.from('[{"task":"t","content":"c"}]') }
    const cases: [string, Uint8Array, RegExp][] = [
      [
        'a name that climbs',
        rawZip([good, { name: '../evil.json', data: deflated('[]'), plain: Buffer.from('[]') }]),
        /zip entry "\.\.\/evil\.json": its name has an empty, \. or \.\. part: refused/,
      ],
      ['a name that climbs inside', zipOf('users/will/../../x.json', '[]'), /"users\/will\/\.\.\/\.\.\/x\.json": its name has an empty, \. or \.\. part/],
      ['an absolute name', zipOf('/etc/knowhub.json', '[]'), /"\/etc\/knowhub\.json": its name is an absolute path/],
      ['a drive letter', zipOf('C:/x.json', '[]'), /"C:\/x\.json": its name is an absolute path/],
      ['a backslash', zipOf('global\\tools.json', '[]'), /its name holds a NUL or a backslash/],
      [
        'a symbolic link (external attributes)',
        zipOf('global/tools.json', '/etc/passwd', { attributes: LINK_ATTRIBUTES }),
        /"global\/tools\.json": it is a symbolic link/,
      ],
      [
        'text that is not UTF-8',
        zipOf('global/tools.json', Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0xfd, 0x28, 0x22, 0x5d])),
        /zip entry "global\/tools\.json" is not UTF-8 text/,
      ],
      ['a name that is not UTF-8', zipOf(Buffer.from([0x67, 0xff, 0x2e, 0x6a]), '[]'), /zip entry "g\ufffd\.j": its name is not UTF-8/],
      ['two entries of one name', rawZip([good, good]), /"users\/will\/habits\.json": the zip holds two entries of that name/],
      [
        'overlapping entries',
        rawZip([good, { ...good, name: 'users/will/tools.json', sameDataAs: 0 }]),
        /"users\/will\/tools\.json": its data overlaps "users\/will\/habits\.json"/,
      ],
      ['an encrypted entry', zipOf('global/tools.json', '[]', { flags: 0x0801 }), /"global\/tools\.json": it is encrypted/],
    ]
    it.each(cases)('%s', async (_what, zip, message) => {
      const before = await t.hub.knowledge.list({ limit: 100 }, { user: 'will', org: 'acme', permissions: ['read', 'write'] })
      const answer = await upload('/api/knowledge/folder/import', zip, { authorization: `Bearer ${tokens.writer}` })
      expect(answer.status, JSON.stringify(answer.body)).toBe(400)
      expect(answer.body.error?.code).toBe('invalid_import')
      expect(answer.body.error?.message).toMatch(message)
      const after = await t.hub.knowledge.list({ limit: 100 }, { user: 'will', org: 'acme', permissions: ['read', 'write'] })
      expect(after.items.length).toBe(before.items.length)
    })

    it('a plain zip of the same folder imports (the checks refuse only what they say)', async () => {
      const answer = await upload('/api/knowledge/folder/import', rawZip([good]), { authorization: `Bearer ${tokens.writer}` })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body).toMatchObject({ applied: true, added: [{ file: 'users/will/habits.json' }] })
    })
  })
})

describe('unzipFolder counts real bytes, whatever the zip declares', () => {
  const limits = { maxFiles: 3, maxFileBytes: 1000, maxTotalBytes: 1500 }
  it('a file past its limit, the whole past its limit, too many entries; a stored entry the same', async () => {
    const big = ' '.repeat(1001)
    await expect(unzipFolder(zipOf('global/tools.json', big, { declaredSize: 10 }), limits)).rejects.toThrow(
      /zip entry "global\/tools\.json" inflates past 1000 bytes/,
    )
    await expect(unzipFolder(zipOf('global/tools.json', big, { method: 0, data: Buffer.from(big), declaredSize: 10 }), limits)).rejects.toThrow(
      /inflates past 1000 bytes/,
    )
    const eight = (name: string) => ({ name, data: deflated(' '.repeat(800)), plain: Buffer.from(' '.repeat(800)), declaredSize: 1 })
    await expect(unzipFolder(rawZip([eight('global/tools.json'), eight('global/plans.json')]), limits)).rejects.toThrow(
      /the zip inflates past 1500 bytes in all \(at entry "global\/plans\.json"\)/,
    )
    const four = ['a', 'b', 'c', 'd'].map((n) => ({ name: `users/${n}/tools.json`, data: deflated('[]'), plain: Buffer.from('[]') }))
    await expect(unzipFolder(rawZip(four), limits)).rejects.toThrow(/the zip has 4 entries; a folder zip has at most 3/)
    await expect(unzipFolder(new TextEncoder().encode('not a zip'), limits)).rejects.toThrow(/not a zip file/)
  })

  it('round-trips what zipFolder writes; skips folders and hidden names', async () => {
    const files = [
      { path: 'README.md', text: '# x\n' },
      { path: 'users/李/tools.json', text: '[{"task":"中文"}]\n' },
    ]
    expect(await unzipFolder(zipFolder(files))).toEqual(files)
    const withHidden = rawZip([
      { name: '.git/config', data: deflated('[core]'), plain: Buffer.from('[core]') },
      { name: 'global/', data: new Uint8Array(0), method: 0, plain: new Uint8Array(0) },
      { name: 'global/tools.json', data: deflated('[]'), plain: Buffer.from('[]') },
    ])
    expect(await unzipFolder(withHidden)).toEqual([{ path: 'global/tools.json', text: '[]' }])
  })
})
