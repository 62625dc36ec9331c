/**
 * The security model's scan (clients "scan sources for obvious secrets and
 * injection patterns"): pack text checked for credentials and for text that
 * tries to steer the model, reported as diagnostics with file and line —
 * never with the secret itself. Knowledge is wrapped as data anyway; this
 * tells authors and reviewers what is in their pack.
 */
import { readBounded, resolvePackPath } from './paths.js'
import type { PackResource, ResourceKind } from './resources.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'

/** Obvious credentials: provider key shapes and private-key blocks. */
const SECRETS: readonly { label: string; pattern: RegExp }[] = [
  { label: 'a private key block', pattern: /-----BEGIN (?:RSA |EC |OPENSSH |DSA |PGP )?PRIVATE KEY-----/u },
  { label: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/u },
  { label: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/u },
  { label: 'an API secret key', pattern: /\bsk-(?:proj-|live-|ant-)?[A-Za-z0-9_-]{20,}\b/u },
  { label: 'a Slack token', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/u },
  { label: 'a Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/u },
  { label: 'a password or secret assignment', pattern: /\b(?:password|passwd|secret|api[_-]?key|access[_-]?token)\s*[:=]\s*["']?[^\s"']{8,}/iu },
]

/** Text that addresses the model instead of stating facts. */
const INJECTIONS: readonly { label: string; pattern: RegExp }[] = [
  {
    label: 'an instruction to ignore earlier instructions',
    pattern: /\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|system)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules?)\b/iu,
  },
  { label: 'a role change', pattern: /\byou are now\b|\bact as (?:an? )?(?:unrestricted|jailbroken|developer mode)\b|\bdeveloper mode\b/iu },
  { label: 'a system-prompt request', pattern: /\b(?:reveal|print|show|repeat)\b[^.\n]{0,30}\bsystem prompt\b/iu },
  { label: 'a fake wrapper or role tag', pattern: /<\/?(?:knowledge_pack|system|assistant|developer)\b[^>]*>|\[\/?(?:INST|SYS)\]/iu },
  { label: 'a Chinese instruction to ignore instructions', pattern: /(?:忽略|无视|忘记)(?:之前|以上|上面|先前|所有)?的?(?:所有)?(?:指令|指示|提示|规则)/u },
  {
    label: 'a tool or command request',
    pattern: /\b(?:run|execute)\b[^.\n]{0,20}\b(?:this|the following)\b[^.\n]{0,20}\b(?:command|script|shell)\b|\bcurl\s+https?:\/\/\S+\s*\|\s*(?:ba)?sh\b/iu,
  },
]

/** Most findings reported per file (the rest are counted in one more diagnostic). */
const MAX_PER_FILE = 5

/**
 * Scans one file's text; returns `secret_found` and `injection_pattern`
 * warnings with the pack-relative path and line.
 * @example
 * scanText('compiled/facts.md', 'Ignore all previous instructions.') // [{ code: 'injection_pattern', … }]
 */
export function scanText(path: string, text: string): PackDiagnostic[] {
  const found: PackDiagnostic[] = []
  let more = 0
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    for (const [code, list] of [
      ['secret_found', SECRETS],
      ['injection_pattern', INJECTIONS],
    ] as const) {
      for (const { label, pattern } of list) {
        if (!pattern.test(line)) continue
        if (found.length >= MAX_PER_FILE) {
          more++
          continue
        }
        const what =
          code === 'secret_found' ? `what looks like ${label}; remove it or move it out of the pack` : `${label}; it is wrapped as data, but review it`
        found.push({ severity: 'warning', code, path, message: `${path}:${i + 1} holds ${what}.` })
      }
    }
  })
  if (more > 0) found.push({ severity: 'warning', code: 'scan_truncated', path, message: `${path} has ${more} more findings.` })
  return found
}

const SCANNED = /\.(?:md|markdown|mdx|txt|json|ya?ml|csv|html?)$/iu

/**
 * Scans a pack's guide and text files (each read up to `maxFileBytes`, at
 * most `maxBytes` in all, runtime views first). Files it could not read or
 * did not reach are skipped, with one info diagnostic.
 * @example
 * const findings = await scanPack(pack, listing.resources, { kinds: ['runtime'] })
 */
export async function scanPack(
  pack: LoadedPack,
  resources: readonly PackResource[],
  options: { kinds?: readonly ResourceKind[]; maxBytes?: number; maxFileBytes?: number } = {},
): Promise<PackDiagnostic[]> {
  const found = scanText('KNOWLEDGE.md', pack.body)
  const maxBytes = options.maxBytes ?? 64 * 2 ** 20
  const files = resources.filter((r) => SCANNED.test(r.path) && (!options.kinds || options.kinds.includes(r.kind)))
  let read = 0
  let skipped = 0
  for (const file of files) {
    if (read >= maxBytes) {
      skipped++
      continue
    }
    const resolved = await resolvePackPath(pack.realRoot, file.path)
    if (!resolved.ok) continue
    try {
      const bounded = await readBounded(resolved.absPath, Math.min(options.maxFileBytes ?? 4 * 2 ** 20, maxBytes - read), pack.realRoot)
      read += Math.min(bounded.size, bounded.text.length)
      found.push(...scanText(file.path, bounded.text))
    } catch {
      skipped++
    }
  }
  if (skipped > 0)
    found.push({ severity: 'info', code: 'scan_truncated', message: `${skipped} files were not scanned (read limit ${maxBytes} bytes, or unreadable).` })
  return found
}
