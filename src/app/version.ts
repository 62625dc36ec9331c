/** The package's version, as package.json says (read once, from the package root). */
import { readFileSync } from 'node:fs'

let cached: string | undefined

/**
 * The version in package.json (the same file from src/ and dist/: both sit two levels
 * below the package root); `0.0.0` when it cannot be read.
 * @example
 * packageVersion() // '0.1.0'
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown }
    cached = typeof pkg.version === 'string' ? pkg.version : '0.0.0'
  } catch {
    cached = '0.0.0'
  }
  return cached
}
