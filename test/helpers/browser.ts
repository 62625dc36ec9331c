/**
 * A real headless Chromium for the dashboard's browser tests, driven by playwright-core
 * (no browser download: the machine's Debian `chromium`, installed by `.ci/run`). A test
 * never assumes the machine has it: without one, `launchChromium` fails with what to
 * install (nothing is skipped). KNOWHUB_TEST_CHROMIUM points at another binary.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** Where Chromium is looked for, in order. */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium', '/usr/bin/google-chrome']

/** The Chromium binary of this machine, or an error saying how to get one. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const wanted = env.KNOWHUB_TEST_CHROMIUM?.trim()
  if (wanted) {
    if (!existsSync(wanted)) throw new Error(`KNOWHUB_TEST_CHROMIUM=${wanted}: no such file`)
    return wanted
  }
  const found = CHROMIUM_CANDIDATES.find((path) => existsSync(path))
  if (!found) {
    throw new Error(
      `The dashboard's browser tests need Chromium and found none at ${CHROMIUM_CANDIDATES.join(', ')}. ` +
        "Install Debian's package (`sudo apt-get install chromium`, as .ci/run does) or set KNOWHUB_TEST_CHROMIUM to a Chromium/Chrome binary.",
    )
  }
  return found
}

/**
 * Launches headless Chromium (one per test file: each launch costs about a second).
 * @example
 * const browser = await launchChromium()
 * const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container has no user namespace for the sandbox; the pages are our own.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--lang=en-US'],
  })
}
