/**
 * The dashboard's entry: asks the server who is signed in (`/ui/me`), shows the sign-in
 * form when nobody is (token mode), else the navigation and the page of the current hash
 * route (`#/search`, `#/entry/ID`, `#/resources`, …).
 */
import { ApiError, call, setCsrf, type Me } from './api.js'
import { h, mount, notice } from './dom.js'
import { entryPage } from './pages/entry.js'
import { overviewPage } from './pages/overview.js'
import { packsPage } from './pages/packs.js'
import { profilePage } from './pages/profile.js'
import { resourcePage, resourcesPage } from './pages/resources.js'
import { searchPage } from './pages/search.js'
import { slimPage } from './pages/slim.js'
import { tokensPage } from './pages/tokens.js'
import type { Page } from './page.js'

const PAGES: Record<string, { title: string; page: Page; show?: (me: Me) => boolean }> = {
  search: { title: 'Search', page: searchPage },
  overview: { title: 'Overview', page: overviewPage },
  resources: { title: 'Resources', page: resourcesPage },
  packs: { title: 'Packs', page: packsPage },
  slim: { title: 'Slim', page: slimPage },
  profile: { title: 'Profile', page: profilePage },
  tokens: { title: 'Tokens', page: tokensPage, show: (me) => me.principal.permissions.some((p) => p === 'admin' || p === 'hub:admin') },
}
const HIDDEN: Record<string, Page> = { entry: entryPage, resource: resourcePage }

function describe(me: Me): string {
  const ids = (['user', 'agent', 'project', 'team', 'org'] as const).flatMap((k) => (me.principal[k] ? [`${k}:${me.principal[k]}`] : []))
  return `${ids.join(' ')} (${me.principal.permissions.join(', ')})`
}

function route(): { name: string; rest: string; params: URLSearchParams } {
  const hash = location.hash.replace(/^#\/?/, '')
  const [path = '', search = ''] = hash.split('?', 2)
  const [name = 'search', ...rest] = path.split('/')
  return { name: name || 'search', rest: rest.map((part) => decodeURIComponent(part)).join('/'), params: new URLSearchParams(search) }
}

async function signOut(): Promise<void> {
  await call('DELETE', '/session')
  location.hash = '#/search'
  await start()
}

function layout(me: Me, app: HTMLElement): HTMLElement {
  const current = route().name
  const main = h('main', { id: 'main', tabindex: '-1' })
  const nav = h(
    'nav',
    { 'aria-label': 'Dashboard' },
    h('a', { class: 'brand', href: '#/search' }, 'KnowHub'),
    h(
      'ul',
      null,
      Object.entries(PAGES)
        .filter(([, p]) => !p.show || p.show(me))
        .map(([name, p]) => h('li', null, h('a', { href: `#/${name}`, 'aria-current': name === current ? 'page' : false }, p.title))),
      h('li', null, h('a', { href: '/docs' }, 'API docs')),
    ),
    h(
      'div',
      { class: 'who' },
      h('span', { class: 'principal', title: me.caller }, me.mode === 'local' ? `local: ${describe(me)}` : describe(me)),
      me.mode === 'token' ? h('button', { type: 'button', class: 'link', onclick: () => void signOut() }, 'Sign out') : null,
    ),
  )
  const skip = (event: Event) => {
    event.preventDefault()
    main.focus()
  }
  mount(app, h('a', { class: 'skip', href: '#main', onclick: skip }, 'Skip to content'), h('header', null, nav), main)
  return main
}

async function render(me: Me, app: HTMLElement): Promise<void> {
  const { name, rest, params } = route()
  const main = layout(me, app)
  const known = PAGES[name]
  // A page hidden from the navigation still opens: the server refuses what the principal may not do.
  const page = known ? known.page : HIDDEN[name]
  if (!page) {
    mount(main, notice('error', `No page "${name}"`))
    return
  }
  document.title = `KnowHub · ${known?.title ?? name}`
  try {
    await page({ me, params, rest, root: main })
  } catch (error) {
    main.append(notice('error', error instanceof Error ? error.message : String(error)))
  }
}

function signInForm(app: HTMLElement, message?: string): void {
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, placeholder: 'kh_…' })
  const status = h('div', { 'aria-live': 'polite' })
  const form = h(
    'form',
    {
      class: 'signin',
      onsubmit: async (event: Event) => {
        event.preventDefault()
        try {
          await call('POST', '/session', { token: input.value })
          await start()
        } catch (error) {
          mount(status, notice('error', error instanceof Error ? error.message : String(error)))
        }
      },
    },
    h('h1', null, 'KnowHub'),
    h(
      'p',
      null,
      'Sign in with an API token. Yours, on the server machine: ',
      h('code', null, 'knowhub token create --me'),
      " (it sees what you saved there); a teammate's: ",
      h('code', null, 'knowhub token create --user ID --org ID'),
      '.',
    ),
    h('label', { for: 'token' }, 'API token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  )
  mount(app, h('main', { id: 'main' }, form))
  if (message) status.append(notice('info', message))
  input.focus()
}

let current: Me | undefined

async function start(): Promise<void> {
  const app = document.getElementById('app')!
  try {
    current = await call<Me>('GET', '/ui/me')
  } catch (error) {
    current = undefined
    // The form says how to sign in; the server's 401 is worth showing only when it says more (a session that ended).
    if (error instanceof ApiError && error.status === 401) return signInForm(app, /^Sign in with an API token/.test(error.message) ? undefined : error.message)
    mount(app, notice('error', error instanceof Error ? error.message : String(error)))
    return
  }
  setCsrf(current.csrf)
  await render(current, app)
}

window.addEventListener('hashchange', () => {
  if (current) void render(current, document.getElementById('app')!)
})
void start()
