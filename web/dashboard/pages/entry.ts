/**
 * One entry: its fields and eval counters, the helpful/harmful history as a timeline, the
 * versions with a word diff against the next one, and the actions (feedback, edit,
 * archive/restore, delete, evolve when an LLM is configured). The server decides who may
 * do what; a refusal is shown as it comes.
 */
import { diffWords } from 'diff'
import { call } from '../api.js'
import { field, h, mount, notice, when } from '../dom.js'
import type { PageContext } from '../page.js'
import type { Entry, Tags, Version } from '../types.js'

function tagText(tags: Tags): string {
  const entries = Object.entries(tags)
  return entries.length === 0 ? '—' : entries.map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : String(v)}`).join(', ')
}

function facts(entry: Entry): HTMLElement {
  const row = (name: string, value: string) => [h('dt', null, name), h('dd', null, value)]
  const s = entry.source
  return h(
    'dl',
    { class: 'facts' },
    row('id', entry.id),
    row('types', entry.types.join(', ')),
    row('tags', tagText(entry.tags)),
    row('scopes', entry.scopes.join(', ')),
    row('owner', entry.owner),
    row('status', entry.merged_into ? `${entry.status} into ${entry.merged_into}` : entry.status),
    row('source', [s.name, s.category, s.agent_id && `agent ${s.agent_id}`, s.submitted_by && `by ${s.submitted_by}`].filter(Boolean).join(' · ') || '—'),
    row('source urls', s.urls.join(' ') || '—'),
    row('resources', entry.resource_ids.join(', ') || '—'),
    row('version', `${entry.version} · updated ${when(entry.updated_at)} · created ${when(entry.created_at)}`),
  )
}

function counters(entry: Entry): HTMLElement {
  const e = entry.eval
  return h(
    'ul',
    { class: 'counters', 'aria-label': 'Evaluation' },
    h('li', null, h('b', { id: 'score' }, String(e.score)), ' score'),
    h('li', null, h('b', { id: 'helpful' }, String(e.helpful)), ' helpful'),
    h('li', null, h('b', { id: 'harmful' }, String(e.harmful)), ' harmful'),
    h('li', null, h('b', null, String(e.score + e.helpful - 2 * e.harmful)), ' quality'),
    h('li', null, h('b', null, e.confidence.toFixed(2)), ' confidence'),
  )
}

function timeline(entry: Entry): HTMLElement {
  const items = [...entry.eval.helpful_history.map((c) => ({ kind: 'helpful', c })), ...entry.eval.harmful_history.map((c) => ({ kind: 'harmful', c }))].sort(
    (a, b) => String(a.c.timestamp ?? '').localeCompare(String(b.c.timestamp ?? '')),
  )
  if (items.length === 0) return h('p', { class: 'muted' }, 'No feedback yet.')
  return h(
    'ol',
    { class: 'timeline' },
    items.map(({ kind, c }) =>
      h(
        'li',
        { class: kind },
        h('span', { class: 'when' }, when(typeof c.timestamp === 'string' ? c.timestamp : undefined)),
        h('b', null, kind),
        ' ',
        [c.task, c.outcome, c.reason, c.query].filter((v) => typeof v === 'string' && v !== '').join(' · ') || JSON.stringify(c),
      ),
    ),
  )
}

/** A word diff of `before` → `after`: removed words struck, added ones marked. */
export function diffView(before: string, after: string): HTMLElement {
  return h(
    'pre',
    { class: 'diff' },
    diffWords(before, after).map((part) => (part.added ? h('ins', null, part.value) : part.removed ? h('del', null, part.value) : part.value)),
  )
}

function versions(entry: Entry, list: Version[]): HTMLElement {
  if (list.length === 0) return h('p', { class: 'muted' }, 'No earlier version.')
  // Each kept version against the one after it (the last against the current text).
  const texts = [
    ...list.map((v) => ({ version: v.version, task: v.task, content: v.content, reason: v.reason, at: v.created_at })),
    { version: entry.version, task: entry.task, content: entry.content, reason: '', at: entry.updated_at },
  ]
  return h(
    'ol',
    { class: 'versions', reversed: true },
    texts.slice(0, -1).map((v, i) => {
      const next = texts[i + 1]!
      return h(
        'li',
        null,
        h(
          'h3',
          null,
          `v${v.version} → v${next.version}`,
          h('small', null, ` ${when(v.at)}${list[i + 1]?.reason || next.reason ? ` · ${list[i]?.reason ?? ''}` : ''}`),
        ),
        v.task !== next.task ? diffView(v.task, next.task) : null,
        diffView(v.content, next.content),
      )
    }),
  )
}

function feedbackForm(entry: Entry, status: HTMLElement, reload: () => Promise<void>): HTMLElement {
  const note = h('input', { id: 'feedback-note', name: 'note', placeholder: 'what happened (optional)' })
  const send = (kind: 'helpful' | 'harmful') => async () => {
    try {
      const body = { [`add_${kind}_case`]: { task: note.value || `marked ${kind} in the dashboard`, timestamp: new Date().toISOString() } }
      await call('PUT', `/ui/knowledge/${encodeURIComponent(entry.id)}`, body)
      await reload()
    } catch (error) {
      mount(status, notice('error', (error as Error).message))
    }
  }
  return h(
    'div',
    { class: 'actions' },
    field('Feedback note', note),
    h('button', { type: 'button', id: 'helpful-btn', onclick: send('helpful') }, 'Helpful'),
    h('button', { type: 'button', id: 'harmful-btn', class: 'danger', onclick: send('harmful') }, 'Harmful'),
  )
}

function editForm(entry: Entry, status: HTMLElement, reload: () => Promise<void>): HTMLElement {
  const task = h('input', { id: 'edit-task', name: 'task', value: entry.task })
  const content = h('textarea', { id: 'edit-content', name: 'content', rows: 8 }, entry.content)
  const reason = h('input', { id: 'edit-reason', name: 'reason', placeholder: 'why (kept with the old version)' })
  return h(
    'details',
    { class: 'edit' },
    h('summary', null, 'Edit'),
    h(
      'form',
      {
        onsubmit: async (event: Event) => {
          event.preventDefault()
          const change: Record<string, string> = {}
          if (task.value !== entry.task) change.task = task.value
          if (content.value !== entry.content) change.content = content.value
          if (reason.value) change.reason = reason.value
          try {
            await call('PATCH', `/ui/knowledge/${encodeURIComponent(entry.id)}`, change)
            await reload()
          } catch (error) {
            mount(status, notice('error', (error as Error).message))
          }
        },
      },
      field('Task', task),
      field('Content', content),
      field('Reason', reason),
      h('button', { type: 'submit', id: 'save-edit' }, 'Save new version'),
    ),
  )
}

function lifecycle(ctx: PageContext, entry: Entry, merged: boolean, status: HTMLElement, reload: () => Promise<void>): HTMLElement {
  const id = encodeURIComponent(entry.id)
  const act = (fn: () => Promise<unknown>, after: () => Promise<void> | void) => async () => {
    try {
      await fn()
      await after()
    } catch (error) {
      mount(status, notice('error', (error as Error).message))
    }
  }
  const evolveText = h('input', { id: 'evolve-feedback', name: 'evolve', placeholder: 'what to change' })
  return h(
    'div',
    { class: 'actions' },
    entry.status === 'archived'
      ? h('button', { type: 'button', onclick: act(() => call('POST', `/ui/knowledge/${id}/restore`), reload) }, 'Restore')
      : entry.status === 'active'
        ? h('button', { type: 'button', onclick: act(() => call('POST', `/ui/knowledge/${id}/archive`), reload) }, 'Archive')
        : null,
    entry.status === 'active' && merged
      ? h('button', { type: 'button', id: 'unmerge-btn', onclick: act(() => call('POST', `/ui/knowledge/${id}/unmerge`), reload) }, 'Un-merge')
      : null,
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: act(
          async () => {
            if (confirm(`Delete ${entry.id} for good?`)) await call('DELETE', `/ui/knowledge/${id}`)
          },
          () => void (location.hash = '#/search'),
        ),
      },
      'Delete',
    ),
    ctx.me.features.llm
      ? h(
          'span',
          { class: 'evolve' },
          field('Evolve with the LLM', evolveText),
          h('button', { type: 'button', onclick: act(() => call('PUT', `/ui/knowledge/${id}`, { evolve_feedback: evolveText.value }), reload) }, 'Evolve'),
        )
      : null,
  )
}

/** The page: `#/entry/ID`. */
export async function entryPage(ctx: PageContext): Promise<void> {
  const id = ctx.rest
  const status = h('div', { 'aria-live': 'polite', id: 'status' })
  const load = async () => {
    const entry = await call<Entry>('GET', `/ui/knowledge/${encodeURIComponent(id)}`)
    const { versions: list } = await call<{ versions: Version[] }>('GET', `/ui/knowledge/${encodeURIComponent(id)}/versions`)
    mount(
      ctx.root,
      h('p', null, h('a', { href: '#/search' }, '← Search')),
      h('h1', { id: 'entry-task' }, entry.task),
      counters(entry),
      status,
      h('h2', null, 'Content'),
      h('pre', { class: 'content', id: 'entry-content' }, entry.content),
      facts(entry),
      h('h2', null, 'Feedback'),
      feedbackForm(entry, status, load),
      timeline(entry),
      h('h2', null, 'Change'),
      editForm(entry, status, load),
      lifecycle(
        ctx,
        entry,
        list.some((v) => v.reason.startsWith('merged from')),
        status,
        load,
      ),
      h('h2', null, 'Versions'),
      versions(entry, list),
    )
  }
  await load()
}
