/**
 * Knowledge packs: the catalog (status, trust, profile), what `packs doctor` says, a pack's
 * activation (its guide, shown as text), and a resolve preview for a typed task: selected
 * files, the token budget as a bar, the audit record, warnings and missing facts.
 */
import { call } from '../api.js'
import { bar, field, h, mount, notice } from '../dom.js'
import type { PageContext } from '../page.js'

interface CatalogItem {
  name: string
  description: string
  type: string
  status: string
  trust?: string
  profile?: string
  scope: string
  location: string
  diagnostics: string[]
}
interface Diagnostic {
  severity: string
  code: string
  message: string
  path?: string
}
interface Overview {
  configured: boolean
  catalog: { items: CatalogItem[]; archived: string[]; rejected: number; shadowed: unknown[] } | null
  doctor: {
    locations: { scope: string; path: string; exists: boolean; packsFound: number }[]
    packs: { name: string; location: string; issues: Diagnostic[] }[]
  } | null
}
interface Resolution {
  pack: string
  status: string
  trust: string
  profile: string
  tokens: number
  selected_documents: string[]
  selected_files: string[]
  source_anchors: string[]
  compile_warnings: { severity: string; path: string; message: string }[]
  missing: string[]
  citation_gaps: string[]
  pieces: { path: string; heading: string; tokens: number; reason: string }[]
}
interface Outcome {
  selected: string[]
  result: {
    task: string
    intent: string
    budget: number
    tokens: number
    context: string
    packs: Resolution[]
    excluded: { pack: string; code: string; message: string }[]
    omitted_count: number
    missing: string[]
  }
}

function catalogTable(items: CatalogItem[], onActivate: (name: string) => void): HTMLElement {
  return h(
    'table',
    { class: 'list', id: 'catalog' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['name', 'description', 'status', 'trust', 'profile', 'scope', ''].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      null,
      items.map((p) =>
        h(
          'tr',
          null,
          h('td', null, p.name),
          h('td', null, p.description),
          h('td', null, p.status),
          h('td', null, p.trust ?? '—'),
          h('td', null, p.profile ?? '—'),
          h('td', null, p.scope),
          h('td', null, h('button', { type: 'button', onclick: () => onActivate(p.name), 'aria-label': `Activate ${p.name}` }, 'Activate')),
        ),
      ),
    ),
  )
}

function doctorView(doctor: NonNullable<Overview['doctor']>): HTMLElement {
  const issues = doctor.packs.flatMap((p) => p.issues.map((i) => ({ pack: p.name, ...i })))
  return h(
    'div',
    { id: 'doctor' },
    h(
      'ul',
      { class: 'locations' },
      doctor.locations.map((l) => h('li', null, `${l.scope}: ${l.path} — ${l.exists ? `${l.packsFound} pack(s)` : 'missing'}`)),
    ),
    issues.length === 0
      ? notice('ok', 'No diagnostics.')
      : h(
          'ul',
          { class: 'diagnostics' },
          issues.map((i) => h('li', { class: i.severity }, `${i.severity} ${i.pack}: ${i.code} — ${i.message}${i.path ? ` (${i.path})` : ''}`)),
        ),
  )
}

function resolutionView(outcome: Outcome): HTMLElement {
  const r = outcome.result
  return h(
    'div',
    { id: 'resolve-result' },
    bar('tokens', r.tokens, r.budget, `${r.tokens} of ${r.budget} tokens`),
    h('p', null, `Intent ${r.intent}; packs: ${outcome.selected.join(', ') || 'none matched'}; ${r.omitted_count} section(s) left out`),
    r.packs.map((p) =>
      h(
        'section',
        { class: 'pack-resolution' },
        h('h3', null, `${p.pack} (${p.profile}, ${p.status}, ${p.trust}) — ${p.tokens} tokens`),
        h('h4', null, 'Selected files'),
        h(
          'ul',
          { class: 'files' },
          p.selected_files.map((f) => h('li', null, f)),
        ),
        h('h4', null, 'Sections'),
        h(
          'ul',
          null,
          p.pieces.map((x) => h('li', null, `${x.path} § ${x.heading} — ${x.tokens} tokens (${x.reason})`)),
        ),
        p.compile_warnings.length > 0
          ? [
              h('h4', null, 'Warnings'),
              h(
                'ul',
                { class: 'warnings' },
                p.compile_warnings.map((w) => h('li', null, `${w.severity}: ${w.path} — ${w.message}`)),
              ),
            ]
          : null,
        h(
          'details',
          null,
          h('summary', null, 'Audit record'),
          h(
            'pre',
            { class: 'audit-record' },
            JSON.stringify(
              {
                selected_documents: p.selected_documents,
                selected_files: p.selected_files,
                source_anchors: p.source_anchors,
                compile_warnings: p.compile_warnings,
                missing: p.missing,
                citation_gaps: p.citation_gaps,
              },
              null,
              2,
            ),
          ),
        ),
      ),
    ),
    r.excluded.length > 0
      ? h(
          'ul',
          { class: 'warnings' },
          r.excluded.map((x) => h('li', null, `${x.pack}: ${x.code} — ${x.message}`)),
        )
      : null,
    r.missing.length > 0
      ? [
          h('h4', null, 'Missing facts'),
          h(
            'ul',
            { class: 'missing' },
            r.missing.map((m) => h('li', null, m)),
          ),
        ]
      : null,
    h('details', null, h('summary', null, 'Context (as the agent receives it)'), h('pre', { class: 'content' }, r.context)),
  )
}

/** `#/packs` */
export async function packsPage(ctx: PageContext): Promise<void> {
  const data = await call<Overview>('GET', '/ui/packs')
  if (!data.configured || !data.catalog || !data.doctor) {
    mount(ctx.root, h('h1', null, 'Knowledge packs'), notice('info', 'No knowledge packs are configured on this server.'))
    return
  }
  const guide = h('section', { id: 'guide', 'aria-live': 'polite' })
  const preview = h('section', { id: 'preview', 'aria-live': 'polite' })
  const activate = async (name: string) => {
    try {
      const activation = await call<{ name: string; content: string; warnings: Diagnostic[] }>('POST', `/ui/packs/${encodeURIComponent(name)}/activate`, {})
      mount(
        guide,
        h('h2', null, `Guide: ${activation.name}`),
        activation.warnings.map((w) => notice('info', `${w.code}: ${w.message}`)),
        h('pre', { class: 'content' }, activation.content),
      )
    } catch (error) {
      mount(guide, notice('error', (error as Error).message))
    }
  }
  const task = h('input', { id: 'resolve-task', name: 'task', placeholder: 'the task an agent is about to do' })
  const budget = h('input', { id: 'resolve-budget', name: 'budget', type: 'number', min: '100', max: '200000', value: '4000' })
  const resolve = async (event: Event) => {
    event.preventDefault()
    try {
      mount(preview, notice('info', 'Resolving…'))
      mount(preview, resolutionView(await call<Outcome>('POST', '/ui/packs/resolve', { task: task.value, budget: Number(budget.value) })))
    } catch (error) {
      mount(preview, notice('error', (error as Error).message))
    }
  }
  mount(
    ctx.root,
    h('h1', null, 'Knowledge packs'),
    data.catalog.items.length === 0 ? notice('info', 'No pack found.') : catalogTable(data.catalog.items, (name) => void activate(name)),
    data.catalog.archived.length > 0 ? h('p', { class: 'muted' }, `Archived: ${data.catalog.archived.join(', ')}`) : null,
    h('h2', null, 'Doctor'),
    doctorView(data.doctor),
    guide,
    h('h2', null, 'Resolve preview'),
    h(
      'form',
      { class: 'inline', onsubmit: resolve },
      field('Task', task),
      field('Token budget', budget),
      h('button', { type: 'submit', id: 'resolve' }, 'Preview'),
    ),
    preview,
  )
}
