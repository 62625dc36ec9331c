/**
 * The dashboard in a real headless Chromium (one launch for the file), in token mode:
 * sign-in; search → entry → feedback → counters change; edit → new version with a diff;
 * a secret masked, revealed with the right token and refused with the wrong one; the pack
 * resolve preview; slim merge and un-merge; the tokens page as admin and refused to a
 * non-admin; labelled fields, keyboard use, 1280×800 and 390×844. Each page is saved as a
 * screenshot (screens.ts); load and search timings are printed, never asserted.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPackService } from '../../src/packs/service.js'
import { launchChromium } from '../helpers/browser.js'
import { SCOPES } from '../packs/helpers.js'
import { openDashboardHub, type DashboardHub } from './helpers.js'
import { recordTimings, screenshot } from './screens.js'

const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }

let t: DashboardHub
let browser: Browser
const tokens: Record<'alice' | 'bob' | 'admin', string> = { alice: '', bob: '', admin: '' }
const alice = { user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read'] as ('read' | 'write' | 'secrets:read')[] }
const ids: Record<string, string> = {}
let resourceOwner = ''

beforeAll(async () => {
  browser = await launchChromium()
  t = await openDashboardHub({ packs: createPackService({ discovery: { projectDir: join(SCOPES, 'project') } }) })
  // Token mode: restart once tokens exist.
  await t.server.close()
  tokens.alice = (await t.hub.tokens.create({ ...alice, name: 'alice laptop' })).token
  tokens.bob = (await t.hub.tokens.create({ user: 'bob', org: 'acme', permissions: ['read', 'write'], name: 'bob' })).token
  tokens.admin = (await t.hub.tokens.create({ user: 'root', org: 'ops', permissions: ['admin'], name: 'admin' })).token
  const k = t.hub.knowledge
  ids.selenium = (
    await k.save(
      {
        task: 'Log in to website A with selenium',
        content: 'Use undetected-chromedriver, wait for the captcha frame, then submit the form.',
        types: ['tool', 'strategy'],
        tags: { domain: 'scraping' },
        scopes: ['org:acme'],
        source: { name: 'agent run 17', urls: ['https://example.com/run/17'] },
      },
      alice,
    )
  ).id
  ids.chinese = (
    await k.save({ task: '用 selenium 登录网站 B', content: '先等待验证码加载，再提交登录表单。', types: ['strategy'], scopes: ['org:acme'] }, alice)
  ).id
  ids.dupA = (
    await k.save(
      {
        task: 'Rotate the staging database password',
        content: 'Rotate the staging database password every month with the vault CLI and update the app secret.',
        types: ['plan'],
        scopes: ['org:acme'],
      },
      alice,
    )
  ).id
  ids.dupB = (
    await k.save(
      {
        task: 'Rotate the staging database password',
        content: 'Rotate the staging database password every month with the vault CLI and update the app secret now.',
        types: ['plan'],
        scopes: ['org:acme'],
      },
      alice,
    )
  ).id
  for (let i = 0; i < 6; i++)
    await k.save(
      {
        task: `Background note ${i} about invoices`,
        content: `Invoices for customer ${i} go out on the first of the month.`,
        types: ['usecase'],
        scopes: ['org:acme'],
      },
      alice,
    )
  const resource = await t.hub.resources.save(
    {
      id: 'cookies/website_a',
      title: 'Website A session cookie',
      content_type: 'cookie',
      body: 'domain=.example.com',
      secure_body: 'session_id=S3CR3T-VALUE',
      metadata: { expires_at: '2030-01-01T00:00:00Z' },
      scopes: ['org:acme'],
    },
    alice,
  )
  resourceOwner = resource.owner
  const { createDashboard } = await import('../../src/server/dashboard/index.js')
  const { dashboardAssets } = await import('./helpers.js')
  const assetsDir = await dashboardAssets()
  const packs = createPackService({ discovery: { projectDir: join(SCOPES, 'project') } })
  t.server = await t.start({ dashboard: (api) => createDashboard({ hub: t.hub, apiAuthenticate: api.authenticate, latency: api.latency, assetsDir, packs }) })
})
afterAll(async () => {
  await browser?.close()
  await t?.close()
})

/** A browser context signed in as `who` (through the sign-in form), with errors collected. */
async function signedIn(who: keyof typeof tokens, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${t.server.url}/`)
  await page.getByLabel('API token').fill(tokens[who])
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor()
  return { context, page, errors }
}

describe('dashboard in Chromium', () => {
  it('signs in with a token into an HttpOnly cookie the page cannot read, and signs out', async () => {
    const context = await browser.newContext({ viewport: DESKTOP })
    const page = await context.newPage()
    const started = Date.now()
    await page.goto(`${t.server.url}/`)
    await page.getByLabel('API token').waitFor()
    const firstLoad = Date.now() - started
    await screenshot(page, 'sign-in')
    // The hint on how to sign in, once (the server's 401 said it a second time).
    expect(await page.getByText(/Sign in with an API token/).count()).toBe(1)
    await page.getByLabel('API token').fill('kh_' + 'x'.repeat(43))
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/unknown, revoked or expired/)
    await page.getByLabel('API token').fill(tokens.alice)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.locator('.principal').textContent()).toContain('user:alice')
    const [cookie] = await context.cookies()
    expect(cookie).toMatchObject({ name: 'kh_session', httpOnly: true, sameSite: 'Strict' })
    expect(await page.evaluate('document.cookie')).toBe('')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('API token').waitFor()
    expect(await context.cookies()).toEqual([])
    recordTimings('sign-in', { first_load_ms: firstLoad })
    await context.close()
  })

  it('search → entry → feedback: results with explain bars, counters change, history shows', async () => {
    const { context, page, errors } = await signedIn('alice')
    const started = Date.now()
    await page.goto(`${t.server.url}/#/search`)
    await page.getByLabel('Search knowledge').waitFor()
    const searchPageLoad = Date.now() - started
    await page.getByLabel('Search knowledge').fill('selenium login')
    const submitted = Date.now()
    await page.getByLabel('Search knowledge').press('Enter')
    await page.locator('.result').first().waitFor()
    const roundTrip = Date.now() - submitted
    expect(await page.locator('.result .task').first().textContent()).toBe('Log in to website A with selenium')
    // The explain breakdown: five stages, drawn as bars.
    expect(await page.locator('.result').first().locator('.bar-row .bar-label').allTextContents()).toEqual([
      'full-text',
      'vector',
      'fusion',
      'routing',
      'rerank',
    ])
    expect(await page.locator('.result').first().locator('.bar-fill').count()).toBe(5)
    // What kept it: the query's words are the entry's (issue 26's explain).
    expect(await page.locator('.result').first().locator('.evidence').textContent()).toMatch(/^kept by its words: full-text strength 0\.\d+/)
    await screenshot(page, 'search')

    // Chinese query, Chinese entry.
    await page.getByLabel('Search knowledge').fill('登录 验证码')
    await page.getByLabel('Search knowledge').press('Enter')
    await expect.poll(() => page.locator('.result .task').allTextContents()).toContain('用 selenium 登录网站 B')

    // Type filter: only plans.
    await page.getByLabel('Search knowledge').fill('password')
    await page.getByRole('checkbox', { name: 'plan' }).check()
    await page.getByRole('button', { name: 'Search' }).click()
    await expect.poll(() => page.locator('.result .meta').allTextContents()).toEqual([expect.stringMatching(/^plan/), expect.stringMatching(/^plan/)])

    await page.goto(`${t.server.url}/#/search?q=selenium`)
    await page.locator('.result .task', { hasText: 'Log in to website A' }).click()
    await page.locator('#entry-task').waitFor()
    expect(await page.locator('#entry-content').textContent()).toContain('undetected-chromedriver')
    expect(await page.locator('#helpful').textContent()).toBe('0')
    await page.getByLabel('Feedback note').fill('worked on the staging site')
    await page.getByRole('button', { name: 'Helpful', exact: true }).click()
    await expect.poll(() => page.locator('#helpful').textContent()).toBe('1')
    await page.getByRole('button', { name: 'Harmful', exact: true }).click()
    await expect.poll(() => page.locator('#harmful').textContent()).toBe('1')
    expect(await page.locator('.timeline li').allTextContents()).toEqual([
      expect.stringContaining('worked on the staging site'),
      expect.stringContaining('harmful'),
    ])
    const stored = await t.hub.knowledge.get(ids.selenium!, alice)
    expect(stored.eval).toMatchObject({ helpful: 1, harmful: 1 })
    await screenshot(page, 'entry')
    recordTimings('search', { search_page_load_ms: searchPageLoad, search_round_trip_ms: roundTrip, entries: 10 })
    expect(errors).toEqual([])
    await context.close()
  })

  it('edit → a new version, shown with a word diff', async () => {
    const { context, page } = await signedIn('alice')
    await page.goto(`${t.server.url}/#/entry/${ids.selenium}`)
    await page.locator('summary', { hasText: 'Edit' }).click()
    await page.getByLabel('Content').fill('Use undetected-chromedriver, wait for the captcha iframe, then submit the login form.')
    await page.getByLabel('Reason').fill('more precise')
    await page.getByRole('button', { name: 'Save new version' }).click()
    await expect.poll(() => page.locator('.versions h3').allTextContents()).toEqual([expect.stringContaining('v1 → v2')])
    expect(await page.locator('.versions del').allTextContents()).toContain('frame')
    expect(await page.locator('.versions ins').allTextContents()).toEqual(expect.arrayContaining(['iframe', 'login ']))
    expect((await t.hub.knowledge.versions(ids.selenium!, alice)).map((v) => v.reason)).toEqual(['more precise'])
    await screenshot(page, 'entry-versions')
    await context.close()
  })

  it('shows a secret masked, reveals it with the right token (logged), refuses it with the wrong one', async () => {
    const { context, page } = await signedIn('alice')
    await page.goto(`${t.server.url}/#/resources`)
    await page.getByRole('link', { name: 'cookies/website_a' }).click()
    await page.locator('#secret').waitFor()
    expect(await page.locator('#secret').textContent()).toContain('masked')
    expect(await page.content()).not.toContain('S3CR3T')
    expect(await page.locator('.facts').textContent()).toContain('expires 2030-01-01')
    await screenshot(page, 'resource-masked')
    await page.getByRole('button', { name: 'Reveal secret' }).click()
    await expect.poll(() => page.locator('#secret').textContent()).toBe('session_id=S3CR3T-VALUE')
    await screenshot(page, 'resource-revealed')
    await context.close()

    const asBob = await signedIn('bob')
    await asBob.page.goto(`${t.server.url}/#/resource?id=cookies/website_a&owner=${resourceOwner}`)
    await asBob.page.getByRole('button', { name: 'Reveal secret' }).click()
    await expect.poll(() => asBob.page.getByRole('alert').textContent()).toMatch(/secrets:read/)
    expect(await asBob.page.locator('#secret').textContent()).not.toContain('S3CR3T')
    await asBob.context.close()

    const log = await t.hub.store.secretReads.list(
      { own: [resourceOwner], adminOrgs: [] },
      { resource_id: 'cookies/website_a', owner: resourceOwner, limit: 10 },
    )
    expect(log.map((r) => r.principal.user)).toEqual(['alice'])
  })

  it('previews a pack resolve: selected files, the token budget bar, audit record, warnings and missing facts', async () => {
    const { context, page, errors } = await signedIn('alice')
    await page.goto(`${t.server.url}/#/packs`)
    await page.locator('#catalog').waitFor()
    expect(await page.locator('#catalog tbody tr td:first-child').allTextContents()).toEqual(expect.arrayContaining(['acme-product-brief', 'research-wiki-zh']))
    await page.getByRole('button', { name: 'Activate acme-product-brief' }).click()
    await expect.poll(() => page.locator('#guide pre').textContent()).toContain('<knowledge_pack_guide')
    await page.getByLabel('Task').fill('What does the Acme Widget cost and what discounts are allowed?')
    await page.getByLabel('Token budget').fill('1500')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.locator('#resolve-result').waitFor()
    const tokensText = await page.locator('#resolve-result .bar-row').first().textContent()
    const [used, budget] = (tokensText ?? '')
      .match(/(\d+) of (\d+) tokens/)!
      .slice(1)
      .map(Number)
    expect(budget).toBe(1500)
    expect(used).toBeGreaterThan(0)
    expect(used).toBeLessThanOrEqual(1500)
    expect(await page.locator('#resolve-result .files li').count()).toBeGreaterThan(0)
    await page.locator('#resolve-result summary', { hasText: 'Audit record' }).first().click()
    expect(JSON.parse((await page.locator('.audit-record').first().textContent()) ?? '{}')).toHaveProperty('selected_files')
    await screenshot(page, 'packs')
    expect(errors).toEqual([])
    await context.close()
  })

  it('slims: proposes the near-duplicate group, merges it, un-merges it', async () => {
    const { context, page } = await signedIn('alice')
    await page.goto(`${t.server.url}/#/slim`)
    await page.getByRole('button', { name: 'Propose (dry run)' }).click()
    await expect.poll(() => page.locator('.group').count()).toBe(1)
    expect(await page.locator('.group a').allTextContents()).toEqual(expect.arrayContaining([ids.dupA, ids.dupB]))
    await screenshot(page, 'slim')
    await page.getByRole('button', { name: 'Merge', exact: true }).click()
    await page.locator('.group a.kept').waitFor()
    const merged = (await page.locator('.group a.kept').textContent())!
    expect((await t.hub.knowledge.get(ids.dupA!, alice)).status).toBe('merged')
    await page.locator('.group a.kept').click()
    await page.getByRole('button', { name: 'Un-merge', exact: true }).click()
    await expect.poll(async () => (await t.hub.knowledge.get(ids.dupA!, alice)).status).toBe('active')
    expect((await t.hub.knowledge.get(merged, alice)).status).toBe('archived')
    await context.close()
  })

  it('lets an admin create (shown once) and revoke tokens; refuses a non-admin', async () => {
    const { context, page } = await signedIn('admin')
    await page.getByRole('link', { name: 'Tokens' }).click()
    await page.locator('#tokens').waitFor()
    // An admin of org ops (issue 27): its org's tokens only — not acme's alice laptop — and new ones of its org.
    const listed = (await page.locator('#tokens').textContent())!
    expect(listed).toContain('user:root org:ops')
    expect(listed).not.toContain('alice laptop')
    expect(await page.content()).not.toContain(tokens.alice)
    await page.getByLabel('name').fill('ci runner')
    await page.getByLabel('agent').fill('ci@ops')
    await page.getByRole('button', { name: 'Create token' }).click()
    const created = (await page.locator('#new-token').textContent())!
    expect(created).toMatch(/^kh_/)
    expect((await t.hub.tokens.verify(created))?.principal).toMatchObject({ agent: 'ci@ops', org: 'ops' })
    await screenshot(page, 'tokens', [page.locator('#new-token')])
    const row = page.locator('#tokens tr', { hasText: 'ci runner' })
    await row.getByRole('button', { name: /Revoke/ }).click()
    await expect.poll(() => page.locator('#tokens tr', { hasText: 'ci runner' }).locator('.status-revoked').count()).toBe(1)
    expect(await t.hub.tokens.verify(created)).toBeUndefined()
    await context.close()

    const asBob = await signedIn('bob')
    expect(await asBob.page.getByRole('link', { name: 'Tokens' }).count()).toBe(0)
    await asBob.page.goto(`${t.server.url}/#/tokens`)
    await expect.poll(() => asBob.page.getByRole('alert').textContent()).toMatch(/admin/)
    await asBob.context.close()
  })

  it('overview: counts by type and scope, saves and feedback per day, search latency from the server counters', async () => {
    const { context, page } = await signedIn('alice')
    await page.goto(`${t.server.url}/#/overview`)
    await page.locator('#total').waitFor()
    expect(await page.locator('#total').textContent()).toMatch(/entries visible to you/)
    expect(await page.locator('#embedder').textContent()).toMatch(/^Embedder: hashed-ngram-v\d+-\d+ \(\d+ dimensions\) · calibration: built in/)
    expect(await page.locator('.grid .bar-label').allTextContents()).toEqual(expect.arrayContaining(['usecase', 'plan', 'org:acme']))
    expect(await page.locator('.columns .day').count()).toBe(30)
    expect(await page.locator('#latency').textContent()).toMatch(/p50 [\d.]+ ms/)
    // The knowledge folder's download button: a zip of alice's folder (docs/knowledge-folder.md).
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-folder').click()])
    expect(download.suggestedFilename()).toBe('knowledge-folder.zip')
    const zip = unzipSync(readFileSync(await download.path()))
    expect(Object.keys(zip)).toContain('README.md')
    expect(Object.keys(zip).filter((path) => path.endsWith('.json')).length).toBeGreaterThan(0)
    await screenshot(page, 'overview')
    await context.close()
  })

  it("profile: each category's current entries with confidence and the timeline, as text; another org's user is not found (#31)", async () => {
    const k = t.hub.knowledge
    const principal = { ...alice, permissions: [...alice.permissions] }
    const language = await k.save(
      { task: 'Preferred language', content: 'Alice prefers TypeScript', types: ['user_profile'], tags: { category: 'preference' }, confidence: 0.7 },
      principal,
    )
    await k.save({ task: 'Editor', content: '<img src=x onerror="window.owned=1">vim', types: ['user_profile'], tags: { category: 'habit' } }, principal)
    await k.edit(language.id, { content: 'Alice prefers Rust now', reason: 'she switched' }, principal)
    const { context, page, errors } = await signedIn('alice')
    await page.getByRole('link', { name: 'Profile' }).click()
    await page.locator('#profile-count').waitFor()
    expect(await page.locator('h1').textContent()).toBe('Profile of alice')
    expect(await page.locator('#profile-preference .content').allTextContents()).toEqual(['Alice prefers Rust now'])
    expect(await page.locator('#profile-preference .bar-value').allTextContents()).toEqual(['70%'])
    expect(await page.locator('#profile-habit .content').allTextContents()).toEqual(['<img src=x onerror="window.owned=1">vim'])
    expect(await page.evaluate('window.owned')).toBeUndefined()
    expect(await page.locator('#profile-timeline tr.changed td').allTextContents()).toEqual(
      expect.arrayContaining(['Alice prefers TypeScript', 'she switched']),
    )
    expect(errors).toEqual([])
    await context.close()

    // The hub's admin token here is an org admin of another org: alice is not its to see.
    const asAdmin = await signedIn('admin')
    await asAdmin.page.goto(`${t.server.url}/#/profile/alice`)
    await expect.poll(() => asAdmin.page.getByRole('alert').textContent()).toMatch(/No user alice/)
    await asAdmin.context.close()
  })

  it('renders the API reference at /docs (Swagger UI, local files) under its CSP', async () => {
    const context = await browser.newContext({ viewport: DESKTOP })
    const page = await context.newPage()
    const external: string[] = []
    page.on('request', (request) => {
      if (!request.url().startsWith(t.server.url) && !request.url().startsWith('data:')) external.push(request.url())
    })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${t.server.url}/docs`)
    await page.locator('.swagger-ui .info .title').waitFor()
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('KnowHub')
    await expect.poll(() => page.locator('.opblock-summary-path').count()).toBeGreaterThan(5)
    // Grouped by area (issue 42), nothing left in Swagger UI's "default" group.
    const groups = await page.locator('.opblock-tag').evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag')))
    expect(groups).toEqual(['knowledge', 'resources', 'packs', 'agents', 'admin', 'users'])
    expect(external).toEqual([])
    expect(errors).toEqual([])
    await screenshot(page, 'api-docs')
    await context.close()
  })

  it('is keyboard usable with labelled fields, and fits 1280×800 and 390×844', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const { context, page } = await signedIn('alice', viewport)
      for (const route of ['#/search?q=selenium', `#/entry/${ids.chinese}`, '#/resources', '#/packs', '#/slim', '#/overview']) {
        await page.goto(`${t.server.url}/${route}`)
        await page.locator('main h1').waitFor()
        // Every form control has an accessible name.
        const unlabelled = await page.evaluate(
          "[...document.querySelectorAll('input, select, textarea')].filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label')).map((el) => el.outerHTML)",
        )
        expect(unlabelled, `${route} at ${viewport.width}`).toEqual([])
        const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'))
        expect(overflow, `${route} overflows at ${viewport.width}px`).toBeLessThanOrEqual(0)
      }
      if (viewport === PHONE) {
        await page.goto(`${t.server.url}/#/search?q=selenium`)
        await page.locator('.result').first().waitFor()
        await screenshot(page, 'search-phone')
      }
      // Keyboard: the search box has focus on load, Enter searches; Tab reaches the entry's actions, Enter runs one.
      await page.goto(`${t.server.url}/#/search`)
      await page.reload()
      await page.getByLabel('Search knowledge').waitFor()
      await page.keyboard.type('invoices')
      await page.keyboard.press('Enter')
      await page.locator('.result').first().waitFor()
      await page.goto(`${t.server.url}/#/entry/${ids.chinese}`)
      await page.reload()
      await page.locator('#entry-task').waitFor()
      const before = Number(await page.locator('#helpful').textContent())
      let reached = false
      for (let i = 0; i < 40 && !reached; i++) {
        await page.keyboard.press('Tab')
        reached = (await page.evaluate('document.activeElement?.id')) === 'helpful-btn'
      }
      expect(reached, `Tab reaches the Helpful button at ${viewport.width}px`).toBe(true)
      await page.keyboard.press('Enter')
      await expect.poll(() => page.locator('#helpful').textContent()).toBe(String(before + 1))
      await context.close()
    }
  })
})
