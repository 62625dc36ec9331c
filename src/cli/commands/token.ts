/**
 * `knowhub token create | list | revoke`: API tokens for the HTTP server. A new
 * token is printed once; only its hash is stored.
 */
import { Command } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import type { TokenInfo } from '../../core/tokens.js'
import { withSession } from '../context.js'
import { serverOptions, sessionOptions } from '../options.js'
import { printJson, type Io } from '../output.js'

/** `--perm read,write` and `--perm read --perm write` alike. */
const collectList = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
]

function describe(info: TokenInfo): string {
  const p = info.principal
  const ids = (['user', 'agent', 'project', 'team', 'org'] as const).flatMap((k) => (p[k] ? [`${k}:${p[k]}`] : [])).join(' ')
  return `${ids} (${p.permissions.join(', ')})`
}

/** The `token` command group. */
export function tokenCommand(io: Io): Command {
  const create = serverOptions(new Command('create'))
    .description('Create an API token for a principal and print it (once)')
    .option('--me', 'a token for yourself: your own ids and permissions (the local principal on the server machine: sign in to the dashboard with it)')
    .option('--user <id>', 'user id')
    .option('--agent <id>', 'agent id')
    .option('--project <id>', 'project id')
    .option('--team <id>', 'team id')
    .option('--org <id>', 'org id')
    .option('--perm <permissions>', 'permissions, comma-separated or repeated: read, write, secrets:read, admin (default: read,write)', collectList)
    .option('--hub-admin', 'a hub operator token (hub:admin: every org, status, backups); only on the server machine')
    .option('--name <name>', 'a label for the token')
    .option('--expires <iso>', 'expiry, an ISO 8601 date-time such as 2027-01-01T00:00:00Z')
    .option('--json', 'print JSON (includes the token)')
    .addHelpText(
      'after',
      '\nExamples:\n  knowhub token create --me --name "my browser"                          (yours: on the server machine, the hub operator\'s)\n  knowhub token create --user alice --org acme --perm read,write,secrets:read --name "alice laptop"\n  knowhub token create --user ann --org acme --perm read,write,admin      (an admin of org acme only)\n  knowhub token create --user ops --hub-admin                            (the hub operator; server machine only)',
    )
    .action(async (options, command: Command) => {
      const ids = (['user', 'agent', 'project', 'team', 'org'] as const).filter((kind) => options[kind] !== undefined)
      if (options.me && (ids.length > 0 || options.perm || options.hubAdmin)) {
        throw new KnowHubError(
          'validation_error',
          `--me is a token with your own ids and permissions: leave out ${[...ids.map((k) => `--${k}`), ...(options.perm ? ['--perm'] : []), ...(options.hubAdmin ? ['--hub-admin'] : [])].join(', ')}`,
        )
      }
      const created = await withSession(sessionOptions(command), io, async (session) => {
        if (options.me) {
          // Your own principal as the hub sees you (the local principal on the server's machine: the hub operator).
          const { principal } = await session.users.me()
          return session.admin.tokens.create({
            ...principal,
            ...(options.name ? { name: options.name } : {}),
            ...(options.expires ? { expires_at: options.expires } : {}),
          })
        }
        return session.admin.tokens.create({
          ...(options.user ? { user: options.user } : {}),
          ...(options.agent ? { agent: options.agent } : {}),
          ...(options.project ? { project: options.project } : {}),
          ...(options.team ? { team: options.team } : {}),
          ...(options.org ? { org: options.org } : {}),
          ...(options.perm || options.hubAdmin
            ? {
                permissions: [
                  ...new Set([
                    ...(options.perm ?? (options.hubAdmin ? ['read', 'write', 'secrets:read', 'admin'] : [])),
                    ...(options.hubAdmin ? ['hub:admin'] : []),
                  ]),
                ],
              }
            : {}),
          ...(options.name ? { name: options.name } : {}),
          ...(options.expires ? { expires_at: options.expires } : {}),
        })
      })
      const { tokenPermissionWarnings } = await import('../../core/tokens.js')
      const warnings = tokenPermissionWarnings(created.principal.permissions)
      if (options.json) return printJson(io, warnings.length > 0 ? { ...created, warnings } : created)
      io.out(created.token)
      for (const warning of warnings) io.err(`warning: ${warning}`)
      io.err(`created ${created.id} for ${describe(created)}${created.expires_at ? `, expires ${created.expires_at}` : ''}`)
      io.err('This token is shown only now: store it safely. Send it as "Authorization: Bearer <token>".')
    })

  const list = serverOptions(new Command('list'))
    .description('List API tokens (never the tokens themselves)')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      const tokens = await withSession({ ...sessionOptions(command), readsOnly: true }, io, (session) => session.admin.tokens.list())
      if (options.json) return printJson(io, tokens)
      if (tokens.length === 0) return io.out('no tokens (the server runs in local mode)')
      for (const t of tokens) {
        io.out(
          `${t.id}  ${t.status.padEnd(7)}  ${t.prefix}…  ${describe(t)}${t.name ? `  "${t.name}"` : ''}  created ${t.created_at}${t.last_used_at ? `  last used ${t.last_used_at}` : ''}`,
        )
      }
    })

  const revoke = serverOptions(new Command('revoke'))
    .description('Revoke an API token')
    .argument('<id>', 'the token id (tok_…), from `knowhub token list`')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      const info = await withSession(sessionOptions(command), io, (session) => session.admin.tokens.revoke(id))
      if (options.json) return printJson(io, info)
      io.out(`revoked ${info.id}`)
    })

  return new Command('token').description('Manage API tokens of the HTTP server').addCommand(create).addCommand(list).addCommand(revoke)
}
