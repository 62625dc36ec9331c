/**
 * A user's profile, current view (issue 31): each seed-002 category with its current entries and
 * their confidence, and the timeline of what changed. `#/profile` shows the signed-in user's;
 * `#/profile/ID` another user's (its org admin and the hub operator may; others see "not found").
 * Every text is rendered as text.
 */
import { ApiError, call } from '../api.js'
import { bar, field, h, mount, notice, when } from '../dom.js'
import type { PageContext } from '../page.js'
import type { UserProfile } from '../types.js'

const CATEGORIES = [
  ['preference', 'Preferences'],
  ['background', 'Background'],
  ['habit', 'Habits'],
  ['constraint', 'Constraints'],
] as const

function current(profile: UserProfile): HTMLElement[] {
  return CATEGORIES.map(([key, title]) => {
    const items = profile.categories[key]
    return h(
      'section',
      { class: 'profile-category', id: `profile-${key}` },
      h('h2', null, `${title} (${items.length})`),
      items.length === 0
        ? h('p', { class: 'empty' }, 'Nothing current.')
        : h(
            'ul',
            { class: 'list' },
            items.map((item) =>
              h(
                'li',
                { class: 'profile-item' },
                h('a', { href: `#/entry/${encodeURIComponent(item.id)}` }, item.task),
                h('p', { class: 'content' }, item.content),
                bar('confidence', item.confidence, 1, `${Math.round(item.confidence * 100)}%`),
                h('small', null, `version ${item.version}, updated ${when(item.updated_at)}`),
              ),
            ),
          ),
    )
  })
}

function timeline(profile: UserProfile): HTMLElement {
  return h(
    'section',
    { id: 'profile-timeline' },
    h('h2', null, 'What changed'),
    h(
      'table',
      { class: 'list' },
      h(
        'thead',
        null,
        h('tr', null, h('th', null, 'when'), h('th', null, 'event'), h('th', null, 'category'), h('th', null, 'text then'), h('th', null, 'why')),
      ),
      h(
        'tbody',
        null,
        [...profile.timeline]
          .reverse()
          .map((e) =>
            h(
              'tr',
              { class: `event ${e.event}` },
              h('td', null, when(e.at)),
              h('td', null, e.event),
              h('td', null, e.category),
              h('td', null, e.content),
              h('td', null, e.reason),
            ),
          ),
      ),
    ),
  )
}

/** `#/profile` and `#/profile/ID` */
export async function profilePage(ctx: PageContext): Promise<void> {
  const user = ctx.rest || ctx.me.principal.user
  const input = h('input', { id: 'profile-user', name: 'user', value: user ?? '' })
  const open = (event: Event) => {
    event.preventDefault()
    location.hash = `#/profile/${encodeURIComponent(input.value.trim())}`
  }
  const form = h('form', { class: 'profile-form', onsubmit: open }, field('User', input), h('button', { type: 'submit' }, 'Show'))
  if (!user) {
    mount(ctx.root, h('h1', null, 'Profile'), form, notice('info', 'This principal has no user id: name a user.'))
    return
  }
  try {
    const profile = await call<UserProfile>('GET', `/ui/users/${encodeURIComponent(user)}/profile`)
    mount(
      ctx.root,
      h('h1', null, `Profile of ${profile.user}`),
      form,
      h('p', { class: 'count', id: 'profile-count' }, `${profile.counts.current} current entries (${profile.counts.entries} in the timeline)`),
      ...current(profile),
      timeline(profile),
    )
  } catch (error) {
    const text = error instanceof ApiError && error.code === 'not_found' ? `No user ${user} that you may see.` : (error as Error).message
    mount(ctx.root, h('h1', null, 'Profile'), form, notice('error', text))
  }
}
