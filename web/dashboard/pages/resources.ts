/**
 * Resources: the visible list (no bodies, never secrets) and one resource with its body and
 * its secret masked; "Reveal" asks the server, which shows it only to a principal with
 * `secrets:read` in the resource's scopes and writes each reveal to the audit log.
 */
import { call, query } from '../api.js'
import { field, h, mount, notice, when } from '../dom.js'
import type { PageContext } from '../page.js'
import type { Resource, ResourceSummary } from '../types.js'

function expiry(r: ResourceSummary): string {
  const at = r.metadata.expires_at
  if (!at) return 'no expiry'
  return r.expired ? `expired ${when(at)}` : `expires ${when(at)}`
}

function link(r: ResourceSummary): string {
  return `#/resource?${new URLSearchParams({ id: r.id, owner: r.owner }).toString()}`
}

/** `#/resources?prefix=…` */
export async function resourcesPage(ctx: PageContext): Promise<void> {
  const prefix = ctx.params.get('prefix') ?? ''
  const input = h('input', { id: 'prefix', name: 'prefix', value: prefix, placeholder: 'code/ · cookies/' })
  const form = h(
    'form',
    {
      class: 'inline',
      onsubmit: (event: Event) => {
        event.preventDefault()
        location.hash = `#/resources${query({ prefix: input.value })}`
      },
    },
    field('Id prefix', input),
    h('button', { type: 'submit' }, 'Filter'),
  )
  const page = await call<{ items: ResourceSummary[]; next_cursor: string | null }>('GET', `/ui/resources${query({ prefix, limit: 100 })}`)
  mount(
    ctx.root,
    h('h1', null, 'Resources'),
    form,
    page.items.length === 0
      ? notice('info', 'No resource visible to you.')
      : h(
          'table',
          { class: 'list' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['id', 'title', 'type', 'owner', 'scopes', 'secret', 'expiry'].map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h(
            'tbody',
            null,
            page.items.map((r) =>
              h(
                'tr',
                { class: r.expired ? 'expired' : '' },
                h('td', null, h('a', { href: link(r) }, r.id)),
                h('td', null, r.title),
                h('td', null, r.content_type),
                h('td', null, r.owner),
                h('td', null, r.scopes.join(', ')),
                h('td', null, r.has_secret ? '•••• (masked)' : '—'),
                h('td', null, expiry(r)),
              ),
            ),
          ),
        ),
    page.next_cursor ? h('p', { class: 'muted' }, 'More resources exist: narrow the prefix.') : null,
  )
}

/** `#/resource?id=…&owner=…` */
export async function resourcePage(ctx: PageContext): Promise<void> {
  const id = ctx.params.get('id') ?? ''
  const owner = ctx.params.get('owner') ?? undefined
  const r = await call<Resource>('GET', `/ui/resources/item${query({ id, owner })}`)
  const secret = h('pre', { class: 'secret', id: 'secret' }, r.has_secret ? '•••••••• (masked)' : '(no secret)')
  const status = h('div', { 'aria-live': 'polite', id: 'reveal-status' })
  const reveal = async () => {
    try {
      const shown = await call<Resource>('POST', '/ui/resources/reveal', { id: r.id, owner: r.owner })
      secret.textContent = shown.secure_body ?? ''
      secret.classList.add('revealed')
      mount(status, notice('ok', 'Revealed. This reveal is recorded in the audit log.'))
    } catch (error) {
      mount(status, notice('error', (error as Error).message))
    }
  }
  mount(
    ctx.root,
    h('p', null, h('a', { href: '#/resources' }, '← Resources')),
    h('h1', null, r.title || r.id),
    h(
      'dl',
      { class: 'facts' },
      [
        ['id', r.id],
        ['type', r.content_type],
        ['owner', r.owner],
        ['scopes', r.scopes.join(', ')],
        ['expiry', expiry(r)],
        ['updated', when(r.updated_at)],
      ].flatMap(([k, v]) => [h('dt', null, k!), h('dd', null, v!)]),
    ),
    h('h2', null, 'Body'),
    h('pre', { class: 'content', id: 'resource-body' }, r.body || '(empty)'),
    h('h2', null, 'Secret'),
    secret,
    r.has_secret ? h('button', { type: 'button', id: 'reveal-btn', onclick: reveal }, 'Reveal secret') : null,
    status,
    r.reveals && r.reveals.length > 0
      ? [
          h('h2', null, 'Secret reads'),
          h(
            'ul',
            { class: 'audit' },
            r.reveals.map((x) => h('li', null, `${when(x.revealed_at)} · ${x.caller} · ${x.via}${x.route ? ` · ${x.route}` : ''}`)),
          ),
        ]
      : null,
  )
}
