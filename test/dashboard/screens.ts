/**
 * Where the browser tests put their screenshots and timings: KNOWHUB_TEST_SCREENSHOTS, or a
 * folder in the temp dir. The current ones are copied into docs/screenshots/ by hand.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'

export const SCREENSHOT_DIR = process.env.KNOWHUB_TEST_SCREENSHOTS?.trim() || join(tmpdir(), 'knowhub-screenshots')

/** Saves a full-page PNG (`mask`: parts painted over, e.g. a token) and returns its size in bytes. */
export async function screenshot(page: Page, name: string, mask: Locator[] = []): Promise<number> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  const path = join(SCREENSHOT_DIR, `${name}.png`)
  await page.screenshot({ path, fullPage: true, mask })
  return statSync(path).size
}

/** Appends measured figures (reported, never asserted) to timings.json beside the screenshots. */
export function recordTimings(name: string, figures: Record<string, number>): void {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  writeFileSync(join(SCREENSHOT_DIR, `timings-${name}.json`), JSON.stringify(figures, null, 2) + '\n')
  console.log(`dashboard timings (${name}): ${JSON.stringify(figures)}`)
}
