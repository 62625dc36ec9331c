/** dotSegments: a raw target with `.` or `..` segments (plain or percent-encoded) is refused. */
import { describe, expect, it } from 'vitest'
import { dotSegments, hasDotSegment } from '../../../src/server/middleware/dot-segments.js'
import { appWith, call } from './helpers.js'

describe('dotSegments middleware', () => {
  it('hasDotSegment finds . and .. segments in every encoding, and only in the path', () => {
    for (const target of ['/a/../b', '/a/./b', '/a/%2e%2e/b', '/a/%2E./b', '/a/.%2e', '/..', '/a/%2e/b?x=1']) expect(hasDotSegment(target), target).toBe(true)
    for (const target of ['/a/b', '/a/..b/c', '/a/b.c', '/a/...', '/a/b?path=../x', '/a/b#../x', '/a/%2e%2e%2f'])
      expect(hasDotSegment(target), target).toBe(false)
  })

  it('refuses such a raw target with validation_error at (path); others pass', async () => {
    let rawTarget = '/echo/%2e%2e/x'
    const app = appWith(dotSegments({ connection: () => ({ rawTarget }) }))
    const refused = await call(app, '/echo')
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: 'validation_error', details: { issues: [{ path: '(path)' }] } })
    rawTarget = '/echo'
    expect((await call(app, '/echo')).status).toBe(200)
  })

  it('checks nothing without a connection (in-process requests have no raw target)', async () => {
    expect((await call(appWith(dotSegments({})), '/echo')).status).toBe(200)
  })
})
