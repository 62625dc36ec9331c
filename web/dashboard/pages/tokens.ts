/** API tokens (admin): create one (shown once), list, revoke. */
import { call } from '../api.js'
import { field, h, mount, notice, when } from '../dom.js'
import type { PageContext } from '../page.js'
import type { TokenInfo } from '../types.js'

const PERMISSIONS = ['read', 'write', 'secrets:read', 'admin'] as const

function ids(principal: TokenInfo['principal']): string {
  return (['user', 'agent', 'project', 'team', 'org'] as const).flatMap((k) => (principal[k] ? [`${k}:${String(principal[k])}`] : [])).join(' ')
}

/** `#/tokens` */
export async function tokensPage(ctx: PageContext): Promise<void> {
  const status = h('div', { 'aria-live': 'polite', id: 'token-status' })
  const inputs = Object.fromEntries((['name', 'user', 'agent', 'project', 'team', 'org'] as const).map((k) => [k, h('input', { id: `token-${k}`, name: k })]))
  const perms = PERMISSIONS.map((p) => h('input', { type: 'checkbox', name: 'permissions', value: p, checked: p === 'read' || p === 'write' }))
  const create = async (event: Event) => {
    event.preventDefault()
    const body: Record<string, unknown> = { permissions: perms.filter((b) => b.checked).map((b) => b.value) }
    for (const [k, input] of Object.entries(inputs)) if (input.value.trim()) body[k] = input.value.trim()
    try {
      const created = await call<TokenInfo & { token: string }>('POST', '/ui/tokens', body)
      await tokensPage(ctx)
      mount(
        document.getElementById('token-status')!,
        h('div', { class: 'notice ok', role: 'status' }, 'Token created — copy it now, it is shown only once: ', h('code', { id: 'new-token' }, created.token)),
      )
    } catch (error) {
      mount(status, notice('error', (error as Error).message))
    }
  }
  const revoke = (id: string) => async () => {
    try {
      await call('POST', `/ui/tokens/${encodeURIComponent(id)}/revoke`)
      await tokensPage(ctx)
    } catch (error) {
      mount(status, notice('error', (error as Error).message))
    }
  }
  const { items } = await call<{ items: TokenInfo[] }>('GET', '/ui/tokens')
  mount(
    ctx.root,
    h('h1', null, 'API tokens'),
    h(
      'form',
      { class: 'token-form', onsubmit: create },
      Object.entries(inputs).map(([k, input]) => field(k, input)),
      h(
        'fieldset',
        null,
        h('legend', null, 'Permissions'),
        perms.map((box, i) => h('label', { class: 'check' }, box, PERMISSIONS[i]!)),
      ),
      h('button', { type: 'submit', id: 'create-token' }, 'Create token'),
    ),
    status,
    h(
      'table',
      { class: 'list', id: 'tokens' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['id', 'name', 'prefix', 'principal', 'permissions', 'status', 'created', 'last used', ''].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        null,
        items.map((t) =>
          h(
            'tr',
            { 'data-id': t.id },
            h('td', null, t.id),
            h('td', null, t.name),
            h('td', null, h('code', null, `${t.prefix}…`)),
            h('td', null, ids(t.principal)),
            h('td', null, t.principal.permissions.join(', ')),
            h('td', { class: `status-${t.status}` }, t.status),
            h('td', null, when(t.created_at)),
            h('td', null, when(t.last_used_at)),
            h(
              'td',
              null,
              t.status === 'active' ? h('button', { type: 'button', class: 'danger', onclick: revoke(t.id), 'aria-label': `Revoke ${t.id}` }, 'Revoke') : '',
            ),
          ),
        ),
      ),
    ),
  )
}
