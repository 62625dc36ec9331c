/**
 * One search everywhere (issue 42): the dashboard's search page asks the API's own search (no
 * `top_k`/`min_score` of its own), so with the README's entries and the default embedder
 * `pnpm docker` shows the one right entry, as the CLI and the API do. A wider search is an
 * explicit control ("Show more": `mode=recall`), and there an unrelated candidate is never
 * labelled the strongest. In a real headless Chromium, in local mode.
 */
import type { Browser, Page, Request as BrowserRequest } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../helpers/browser.js'
import { openDashboardHub, type DashboardHub } from './helpers.js'

let t: DashboardHub
let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
  // The README's embedder (the default, `sentence`): the one that found Selenium for `pnpm docker`.
  t = await openDashboardHub({ config: { embedder: { provider: 'sentence' } } })
  const local = t.hub.config.principal
  for (const entry of [
    {
      task: 'Log in to site A with Selenium',
      content: 'undetected_chromedriver avoids most bot checks; add random delays',
      types: ['tool', 'strategy'] as const,
    },
    { task: 'Deploy with pnpm in Docker', content: 'Use corepack enable before pnpm install', types: ['tool'] as const },
    { task: '记录用户的编码偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] as const },
  ])
    await t.hub.knowledge.save({ ...entry, types: [...entry.types] }, local)
}, 180_000)
afterAll(async () => {
  await browser?.close()
  await t?.close()
})

/** The tasks of the results on the page, and the "kept …" line of each. */
async function shown(page: Page): Promise<Array<{ task: string; kept: string }>> {
  await page.locator('#results .count').waitFor()
  return page
    .locator('#results li.result')
    .evaluateAll((items) => items.map((li) => ({ task: li.querySelector('.task')?.textContent ?? '', kept: li.querySelector('.evidence')?.textContent ?? '' })))
}

/** The searches the page asks the server for, as they are asked. */
function searchesOf(page: Page): URL[] {
  const asked: URL[] = []
  page.on('request', (request: BrowserRequest) => {
    const url = new URL(request.url())
    if (url.pathname === '/ui/knowledge/search') asked.push(url)
  })
  return asked
}

describe('dashboard search, as the API searches', () => {
  it('asks the API defaults and shows the one right entry; "Show more" is a recall search that labels no follower the strongest', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const asked = searchesOf(page)
    await page.goto(`${t.server.url}/#/search?q=${encodeURIComponent('pnpm docker')}`)
    const precise = await shown(page)
    expect(precise.map((r) => r.task)).toEqual(['Deploy with pnpm in Docker'])
    expect(asked).toHaveLength(1)
    expect([...asked[0]!.searchParams.keys()].sort()).toEqual(['explain', 'q'])
    // The same answer the API gives with its defaults.
    const api = (await (await fetch(`${t.server.url}/api/knowledge/search?q=pnpm%20docker`)).json()) as { results: Array<{ task: string }> }
    expect(api.results.map((r) => r.task)).toEqual(precise.map((r) => r.task))

    await page.getByRole('link', { name: 'Show more' }).click()
    await page.getByRole('link', { name: 'Show only the closest matches' }).waitFor()
    const wide = await shown(page)
    expect(asked.at(-1)!.searchParams.get('mode')).toBe('recall')
    expect(asked.at(-1)!.searchParams.get('top_k')).toBe('20')
    expect(wide[0]!.task).toBe('Deploy with pnpm in Docker')
    // Only the first result may rest on being the strongest; the others kept only for following it say so.
    for (const result of wide.slice(1)) expect(result.kept, result.task).not.toContain('strongest candidate (the query has an answer)')
    const selenium = wide.find((r) => r.task.includes('Selenium'))
    if (selenium) expect(selenium.kept).toContain('follows the strongest candidate')
    await context.close()
  }, 120_000)

  it('lists in the order chosen (the API\'s order: scope or quality), kept in the link and in "Show more"', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const asked = searchesOf(page)
    await page.goto(`${t.server.url}/#/search`)
    await page.locator('#q').fill('pnpm docker')
    await page.locator('#order').selectOption('quality')
    await page.getByRole('button', { name: 'Search' }).click()
    await shown(page)
    expect(page.url()).toContain('order=quality')
    expect(asked.at(-1)!.searchParams.get('order')).toBe('quality')
    await page.getByRole('link', { name: 'Show more' }).click()
    await page.getByRole('link', { name: 'Show only the closest matches' }).waitFor()
    const wide = await shown(page)
    expect(asked.at(-1)!.searchParams.get('order')).toBe('quality')
    expect(await page.locator('#order').inputValue()).toBe('quality')
    const api = (await (await fetch(`${t.server.url}/api/knowledge/search?q=pnpm%20docker&mode=recall&top_k=20&order=quality`)).json()) as {
      results: Array<{ task: string }>
    }
    expect(wide.map((r) => r.task)).toEqual(api.results.map((r) => r.task))
    await context.close()
  }, 120_000)
})
