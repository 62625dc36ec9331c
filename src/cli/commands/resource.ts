/**
 * `knowhub resource save | update | get | list | delete` and `knowhub secrets status | rotate`.
 * Secrets are never taken from a command-line argument (visible in `ps` and shell
 * history): only from a file or stdin — except the new key of `secrets rotate --new-key`,
 * which may be (`-` reads it from stdin). `get` prints a secret only with `--show-secret`.
 * The resource commands run on the server holding the data folder when one does (or the
 * one `--url` names), like the knowledge commands; `secrets` needs the database itself.
 */
import { readFileSync } from 'node:fs'
import { Command } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import type { Resource } from '../../core/resources.js'
import { RESOURCE_CONTENT_TYPES } from '../../core/vocabulary.js'
import type { SecretKeyRotation } from '../../resources/rotate.js'
import { withHub, withSession, type GlobalOptions } from '../context.js'
import { serverOptions, sessionOptions } from '../options.js'
import { oneLine, printJson, type Io } from '../output.js'

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]
const csv = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

function int(name: string) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n)) throw new KnowHubError('validation_error', `${name} must be an integer, got "${value}"`)
    return n
  }
}

function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions
}

function readText(value: string | undefined, file: string | undefined, what: string): string | undefined {
  if (file !== undefined && value !== undefined) throw new KnowHubError('validation_error', `give ${what} once: as text or as a file`)
  if (file !== undefined) return readFileSync(file === '-' ? 0 : file, 'utf8')
  if (value === '-') return readFileSync(0, 'utf8')
  return value
}

function readSecret(options: { secretFile?: string; secretStdin?: boolean }): string | undefined {
  if (options.secretFile !== undefined && options.secretStdin) throw new KnowHubError('validation_error', 'use --secret-file or --secret-stdin, not both')
  if (options.secretStdin) return readFileSync(0, 'utf8').replace(/\r?\n$/, '')
  if (options.secretFile !== undefined) return readFileSync(options.secretFile, 'utf8').replace(/\r?\n$/, '')
  return undefined
}

function parseMeta(pairs: string[], options: { language?: string; acquiredAt?: string; expiresAt?: string }): Record<string, unknown> | undefined {
  const meta: Record<string, unknown> = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new KnowHubError('validation_error', `--meta must be key=value, got "${pair}"`)
    meta[pair.slice(0, at)] = pair.slice(at + 1)
  }
  if (options.language) meta.language = options.language
  if (options.acquiredAt) meta.acquired_at = options.acquiredAt
  if (options.expiresAt) meta.expires_at = options.expiresAt
  return Object.keys(meta).length > 0 ? meta : undefined
}

function printResource(io: Io, r: Resource): void {
  io.out(`${r.id}  [${r.content_type}]  v${r.version}${r.expired ? '  EXPIRED' : ''}`)
  io.out(`title:   ${r.title}`)
  io.out(`scopes:  ${r.scopes.join(', ')}    owner: ${r.owner}`)
  if (Object.keys(r.metadata).length > 0) io.out(`meta:    ${JSON.stringify(r.metadata)}`)
  io.out(
    `secret:  ${r.secure_body !== undefined ? 'shown below' : r.has_secret ? 'stored (use --show-secret; needs secrets:read in one of its scopes)' : 'none'}`,
  )
  io.out(`created: ${r.created_at}  updated: ${r.updated_at}`)
  if (r.body) io.out(`\n${r.body}`)
  if (r.secure_body !== undefined) io.out(`\n--- secure_body ---\n${r.secure_body}`)
}

function contentOptions(command: Command): Command {
  return command
    .option('--body <text>', 'the public content ("-" reads stdin)')
    .option('--body-file <path>', 'read the public content from a file')
    .option('--secret-file <path>', 'read the secret content (secure_body) from a file')
    .option('--secret-stdin', 'read the secret content (secure_body) from stdin')
    .option('--type <type>', `content type: ${RESOURCE_CONTENT_TYPES.join(', ')} or x-name`)
    .option('--language <lang>', 'metadata.language (of code)')
    .option('--acquired-at <iso>', 'metadata.acquired_at')
    .option('--expires-at <iso>', 'metadata.expires_at (a cookie past it is flagged expired)')
    .option('--meta <key=value>', 'another metadata field (repeatable)', collect, [])
    .option('--scope <scope>', 'a visibility scope, e.g. org:acme (repeatable)', collect)
    .option('--owner <kind:id>', 'owner (default: you)')
    .option('--json', 'print JSON')
}

function saveCommand(io: Io): Command {
  return contentOptions(
    serverOptions(new Command('save'))
      .description("Save a resource in its owner's namespace (default: yours); saving an id you own already updates it")
      .argument('<id>', 'path-like id, e.g. code/selenium/login')
      .requiredOption('--title <text>', 'a short title'),
  )
    .addHelpText(
      'after',
      '\nExample:\n  knowhub resource save cookies/site_a --title "Site A cookie" --type cookie --expires-at 2026-03-07T10:00:00Z --secret-stdin < cookie.txt',
    )
    .action(async (id: string, options, command: Command) => {
      const secure = readSecret(options)
      const body = readText(options.body, options.bodyFile, 'the body')
      const metadata = parseMeta(options.meta, options)
      const { resource: saved, created } = await withSession(sessionOptions(command), io, (session) =>
        session.resources.save({
          id,
          title: options.title,
          ...(body !== undefined ? { body } : {}),
          ...(secure !== undefined ? { secure_body: secure } : {}),
          ...(options.type ? { content_type: options.type } : {}),
          ...(metadata ? { metadata } : {}),
          ...(options.scope ? { scopes: options.scope } : {}),
          ...(options.owner ? { owner: options.owner } : {}),
        }),
      )
      if (options.json) printJson(io, saved)
      else io.out(`${created ? 'saved' : 'updated'} ${saved.id} (owner ${saved.owner}, v${saved.version})${saved.has_secret ? ' (secret encrypted)' : ''}`)
    })
}

function updateCommand(io: Io): Command {
  return contentOptions(
    serverOptions(new Command('update'))
      .description('Change a resource (owner or admin); only the given fields change')
      .argument('<id>', 'resource id')
      .option('--title <text>', 'a new title')
      .option('--of <kind:id>', 'the resource of this owner (ids are namespaced by owner; default: yours, else the one you see first)')
      .option('--remove-secret', 'delete the stored secret'),
  ).action(async (id: string, options, command: Command) => {
    const secure = readSecret(options)
    if (secure !== undefined && options.removeSecret) throw new KnowHubError('validation_error', 'use a new secret or --remove-secret, not both')
    const body = readText(options.body, options.bodyFile, 'the body')
    const metadata = parseMeta(options.meta, options)
    const updated = await withSession(sessionOptions(command), io, (session) =>
      session.resources.update(
        id,
        {
          ...(options.title ? { title: options.title } : {}),
          ...(body !== undefined ? { body } : {}),
          ...(secure !== undefined ? { secure_body: secure } : {}),
          ...(options.removeSecret ? { secure_body: null } : {}),
          ...(options.type ? { content_type: options.type } : {}),
          ...(metadata ? { metadata } : {}),
          ...(options.scope ? { scopes: options.scope } : {}),
          ...(options.owner ? { owner: options.owner } : {}),
        },
        options.of ? { owner: options.of } : {},
      ),
    )
    if (options.json) printJson(io, updated)
    else io.out(`updated ${updated.id} (v${updated.version})`)
  })
}

function getCommand(io: Io): Command {
  return serverOptions(new Command('get'))
    .description('Show one resource; the secret only with --show-secret (and secrets:read in its scope)')
    .argument('<id>', 'resource id')
    .option('--show-secret', 'decrypt and show secure_body')
    .option('--owner <kind:id>', "this owner's resource (ids are namespaced by owner; default: yours, else the one you see first)")
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      const found = await withSession({ ...sessionOptions(command), readsOnly: true }, io, (session) =>
        session.resources.get(id, { includeSecret: Boolean(options.showSecret), ...(options.owner ? { owner: options.owner } : {}) }),
      )
      if (options.json) return printJson(io, found)
      printResource(io, found)
      if (options.showSecret && found.has_secret && found.secure_body === undefined)
        io.err('the secret is not shown: you need secrets:read and one of your own ids among its scopes')
    })
}

function listCommand(io: Io): Command {
  return serverOptions(new Command('list'))
    .description('List resources ordered by id (never with secrets)')
    .option('--prefix <prefix>', 'only ids starting with this, e.g. code/selenium/')
    .option('--type <list>', 'comma-separated content types', csv)
    .option('--scopes <list>', 'comma-separated scopes', csv)
    .option('--owner <kind:id>', 'only this owner')
    .option('--expired', 'only expired ones')
    .option('--not-expired', 'only those not expired')
    .option('-n, --limit <n>', 'how many', int('--limit'), 20)
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      if (options.expired && options.notExpired) throw new KnowHubError('validation_error', 'use --expired or --not-expired, not both')
      const page = await withSession({ ...sessionOptions(command), readsOnly: true }, io, (session) =>
        session.resources.list({
          limit: options.limit,
          ...(options.prefix ? { prefix: options.prefix } : {}),
          ...(options.type ? { content_type: options.type } : {}),
          ...(options.scopes ? { scopes: options.scopes } : {}),
          ...(options.owner ? { owner: options.owner } : {}),
          ...(options.expired ? { expired: true } : options.notExpired ? { expired: false } : {}),
          ...(options.cursor ? { cursor: options.cursor } : {}),
        }),
      )
      if (options.json) return printJson(io, page)
      if (page.items.length === 0) io.out('no resources')
      for (const r of page.items) {
        io.out(
          `${r.id}  [${r.content_type}]${r.has_secret ? ' 🔒' : ''}${r.expired ? ' EXPIRED' : ''}  ${r.owner}  ${r.scopes.join(',')}  ${oneLine(r.title, 60)}`,
        )
      }
      if (page.next_cursor) io.out(`\nmore: knowhub resource list --cursor ${page.next_cursor}`)
    })
}

function deleteCommand(io: Io): Command {
  return serverOptions(new Command('delete'))
    .description('Delete a resource for good (owner or admin)')
    .argument('<id>', 'resource id')
    .option('--owner <kind:id>', "this owner's resource (default: yours, else the one you see first)")
    .action(async (id: string, options, command: Command) => {
      const { owner } = await withSession(sessionOptions(command), io, (session) => session.resources.delete(id, options.owner ? { owner: options.owner } : {}))
      io.out(`deleted ${id} (owner ${owner})`)
    })
}

function secretsStatusCommand(io: Io): Command {
  return new Command('status')
    .description('Show where the key comes from, its id, and how many secrets each key protects')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      const status = await withHub(globals(command), async (hub) =>
        (await import('../../resources/rotate.js')).secretKeyStatus({ store: hub.store, keyring: hub.secrets }),
      )
      if (options.json) return printJson(io, status)
      io.out(
        `key:     ${status.key_id} (${status.source === 'file' ? `file ${status.key_file}` : status.source === 'config' ? 'KNOWHUB_SECRET_KEY / config' : 'ephemeral, in memory'})`,
      )
      if (status.secrets_by_key.length === 0) io.out('secrets: none stored')
      for (const row of status.secrets_by_key)
        io.out(`secrets: ${row.count} under key ${row.key_id}${row.key_id === status.key_id ? '' : '  ← NOT the configured key'}`)
    })
}

function printRotation(io: Io, report: SecretKeyRotation): void {
  io.out(
    `re-encrypted ${report.rotated} secrets${report.unchanged ? ` (${report.unchanged} were already under the new key)` : ''}: key ${report.old_key_id} → ${report.new_key_id}`,
  )
  if (report.key_source === 'file') io.out(`new key written to ${report.key_file} (mode 0600)`)
  else io.out(`now set KNOWHUB_SECRET_KEY (or secrets.key) to the new key ${report.new_key_id} before the next start: the old key no longer reads the secrets`)
}

function secretsRotateCommand(io: Io): Command {
  return new Command('rotate')
    .description('Re-encrypt every secret with a new key (key file: written there; KNOWHUB_SECRET_KEY: give or print the new key)')
    .option('--new-key <key>', 'when the key comes from KNOWHUB_SECRET_KEY / secrets.key: the new key, base64 or hex of 32 bytes ("-" reads it from stdin)')
    .option('--print-new-key', 'when the key comes from KNOWHUB_SECRET_KEY / secrets.key: generate the new key and print it once')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nWith a key file, the new key is first written to <key file>.new (mode 0600); all secrets are re-encrypted\nin one transaction; only after it commits is <key file>.new renamed over the key file. If the command is\ninterrupted, run it again: it picks up <key file>.new and finishes.\n\n' +
        'With the key in KNOWHUB_SECRET_KEY (or secrets.key), KnowHub cannot change the variable: give the new key\n(--new-key -, e.g. from `openssl rand -base64 32`) or let it print one (--print-new-key), then set\nKNOWHUB_SECRET_KEY to it before the next start.',
    )
    .action(async (options: { newKey?: string; printNewKey?: boolean; json?: boolean }, command: Command) => {
      if (options.newKey !== undefined && options.printNewKey) throw new KnowHubError('validation_error', 'use --new-key or --print-new-key, not both')
      let printed: string | undefined
      const { rotateSecretKey } = await import('../../resources/rotate.js')
      const report = await withHub(globals(command), (hub) =>
        rotateSecretKey(
          { store: hub.store, keyring: hub.secrets },
          {
            newKey: options.newKey === '-' ? readFileSync(0, 'utf8') : options.newKey,
            generate: options.printNewKey,
            // Printed before the secrets change hands: however the command ends, the key is not lost.
            onNewKey: (key) => {
              if (!options.printNewKey) return
              printed = key.toBase64()
              const line = `new key (set KNOWHUB_SECRET_KEY to it; shown only now): ${printed}`
              if (options.json) io.err(line)
              else io.out(line)
            },
          },
        ),
      )
      if (options.json) return printJson(io, { ...report, ...(printed !== undefined ? { new_key: printed } : {}) })
      printRotation(io, report)
    })
}

/** The resource and secrets commands, added to the root program. */
export function resourceCommands(io: Io): Command[] {
  const resource = new Command('resource').description('Resources: code, credentials, cookies and other material that knowledge entries reference')
  for (const command of [saveCommand, updateCommand, getCommand, listCommand, deleteCommand]) resource.addCommand(command(io))
  const secrets = new Command('secrets').description('The key that encrypts resource secrets at rest')
  secrets.addCommand(secretsStatusCommand(io)).addCommand(secretsRotateCommand(io))
  return [resource, secrets]
}
