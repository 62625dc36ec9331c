/** Overview: entries by type and scope, saves and feedback per day (a column chart), search latency percentiles. */
import { call } from '../api.js'
import { bar, h, mount } from '../dom.js'
import type { PageContext } from '../page.js'

interface Overview {
  total: number
  by_status: { status: string; count: number }[]
  by_type: { type: string; count: number }[]
  by_scope: { scope: string; count: number }[]
  saves_per_day: { day: string; count: number }[]
  feedback_per_day: { day: string; helpful: number; harmful: number }[]
  search_latency_ms: { count: number; p50: number | null; p90: number | null; p99: number | null; max: number | null }
  /** The embedder search uses (absent on an older server). */
  embedder?: {
    model: string
    dimension: number
    convention?: { name: string; source: string } | null
    calibration?: { source: string; name: string }
  }
}

/** One line naming the embedder: model, dimensions, query/document convention and calibration. */
function embedderLine(e: NonNullable<Overview['embedder']>): HTMLElement {
  const parts = [`${e.model} (${e.dimension} dimensions)`]
  if (e.convention) parts.push(`queries and documents: ${e.convention.name} (${e.convention.source === 'table' ? 'known model' : e.convention.source})`)
  if (e.calibration) parts.push(`calibration: ${e.calibration.name}`)
  return h('p', { class: 'count', id: 'embedder' }, `Embedder: ${parts.join(' · ')}`)
}

/** The last 30 days as columns: saves, helpful, harmful per day. */
function chart(data: Overview): HTMLElement {
  const days: string[] = []
  const today = new Date()
  for (let i = 29; i >= 0; i--) days.push(new Date(today.getTime() - i * 86_400_000).toISOString().slice(0, 10))
  const saves = new Map(data.saves_per_day.map((d) => [d.day, d.count]))
  const feedback = new Map(data.feedback_per_day.map((d) => [d.day, d]))
  const max = Math.max(1, ...days.map((d) => Math.max(saves.get(d) ?? 0, (feedback.get(d)?.helpful ?? 0) + (feedback.get(d)?.harmful ?? 0))))
  const column = (kind: string, value: number, day: string) =>
    h('span', { class: `col ${kind}`, height: `${((value / max) * 100).toFixed(1)}%`, title: `${day}: ${value} ${kind}` })
  return h(
    'figure',
    { class: 'chart' },
    h(
      'div',
      { class: 'columns', role: 'img', 'aria-label': 'Saves and feedback per day, last 30 days' },
      days.map((d) =>
        h(
          'div',
          { class: 'day' },
          column('saves', saves.get(d) ?? 0, d),
          column('helpful', feedback.get(d)?.helpful ?? 0, d),
          column('harmful', feedback.get(d)?.harmful ?? 0, d),
        ),
      ),
    ),
    h(
      'figcaption',
      null,
      h('span', { class: 'key saves' }, 'saves'),
      h('span', { class: 'key helpful' }, 'helpful'),
      h('span', { class: 'key harmful' }, 'harmful'),
      ` · ${days[0]} – ${days[29]} (max ${max}/day)`,
    ),
  )
}

/** `#/overview` */
export async function overviewPage(ctx: PageContext): Promise<void> {
  const data = await call<Overview>('GET', '/ui/overview')
  const maxType = Math.max(1, ...data.by_type.map((t) => t.count))
  const maxScope = Math.max(1, ...data.by_scope.map((t) => t.count))
  const l = data.search_latency_ms
  mount(
    ctx.root,
    h('h1', null, 'Overview'),
    h(
      'p',
      { class: 'count', id: 'total' },
      `${data.total} entries visible to you (${data.by_status.map((s) => `${s.count} ${s.status}`).join(', ') || 'none'})`,
    ),
    data.embedder ? embedderLine(data.embedder) : null,
    h(
      'p',
      null,
      h('a', { href: '/ui/knowledge/folder', download: 'knowledge-folder.zip', id: 'download-folder', class: 'button' }, 'Download knowledge folder (zip)'),
      ' — every entry you see, as files by scope and type (docs/knowledge-folder.md)',
    ),
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        null,
        h('h2', null, 'By type'),
        data.by_type.map((t) => bar(t.type, t.count, maxType, String(t.count))),
      ),
      h(
        'section',
        null,
        h('h2', null, 'By scope'),
        data.by_scope.map((s) => bar(s.scope, s.count, maxScope, String(s.count))),
      ),
    ),
    h('h2', null, 'Saves and feedback'),
    chart(data),
    h('h2', null, 'Search latency'),
    h(
      'p',
      { id: 'latency' },
      l.count === 0 ? 'No search since the server started.' : `last ${l.count} searches: p50 ${l.p50} ms · p90 ${l.p90} ms · p99 ${l.p99} ms · max ${l.max} ms`,
    ),
  )
}
