/** Search: query, type and scope filters; results with quality score and the explain breakdown per stage as bars. */
import { call, query, visibleScopes } from '../api.js'
import { bar, field, h, mount, notice } from '../dom.js'
import type { PageContext } from '../page.js'
import type { SearchHit } from '../types.js'

export const TYPES = ['strategy', 'tool', 'usecase', 'definition', 'plan', 'user_profile'] as const

/** The explain breakdown of one hit, scaled against the best of the page per stage. */
function explainBars(hit: SearchHit, best: Record<string, number>): HTMLElement {
  const e = hit.explain
  return h(
    'div',
    { class: 'explain', 'aria-label': 'Score breakdown' },
    bar('full-text', e?.fulltext_score ?? null, best.fulltext ?? 0, e?.fulltext_rank ? `#${e.fulltext_rank} · ${round(e.fulltext_score)}` : 'no match'),
    bar('vector', e?.vector_similarity ?? null, best.vector ?? 0, e?.vector_rank ? `#${e.vector_rank} · ${round(e.vector_similarity)}` : 'no match'),
    bar('fusion', e?.fused ?? null, best.fused ?? 0, round(e?.fused ?? null)),
    bar('routing', null, 1, 'no LLM routing'),
    bar('rerank', hit.quality_score, best.quality ?? 0, `quality ${hit.quality_score} · scope ${e?.scope_priority ?? '—'}`),
    h('p', { class: 'evidence', title: 'what kept this result (docs/retrieval.md, "The precision gate")' }, keptBy(e)),
  )
}

/** Why the relevance gate kept a hit, in words. */
function keptBy(e: SearchHit['explain']): string {
  const strength = `full-text strength ${round(e?.fulltext_strength ?? null)}`
  const margin = `similarity ${round(e?.vector_similarity ?? null)} over a background of ${round(e?.background_similarity ?? null)}`
  switch (e?.evidence) {
    case 'words':
      return `kept by its words: ${strength}`
    case 'agreement':
      return `kept by both lists agreeing: a shared word (${strength}) and ${margin}`
    case 'meaning':
      return `kept by its meaning: ${margin}`
    case 'anchor':
      return 'kept as the strongest candidate (the query has an answer)'
    case 'follows':
      return 'kept because it follows the strongest candidate (a recall search)'
    case 'neighbour':
      return 'lifted in by a dialogue neighbour'
    default:
      return 'kept: no gate'
  }
}

function round(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : String(Math.round(value * 1000) / 1000)
}

function resultItem(hit: SearchHit, best: Record<string, number>): HTMLElement {
  return h(
    'li',
    { class: 'result' },
    h(
      'div',
      { class: 'result-head' },
      h('a', { href: `#/entry/${encodeURIComponent(hit.id)}`, class: 'task' }, hit.task),
      h('span', { class: 'quality', title: 'quality score = score + helpful − 2 × harmful' }, `quality ${hit.quality_score}`),
    ),
    h(
      'p',
      { class: 'meta' },
      `${hit.types.join(', ')} · ${hit.scopes.join(', ')} · score ${hit.eval.score} · helpful ${hit.eval.helpful} · harmful ${hit.eval.harmful}`,
    ),
    h('p', { class: 'snippet' }, hit.content.length > 280 ? `${hit.content.slice(0, 280)}…` : hit.content),
    explainBars(hit, best),
  )
}

/** How many results "Show more" asks for (a recall search). */
export const MORE_TOP_K = 20

/**
 * The search the page asks for: the API's own (`top_k` 5, `min_score` 3, precision first), as
 * the CLI, the tools and MCP search; "Show more" (`more=1`) asks for recall explicitly
 * (`mode=recall`, {@link MORE_TOP_K} results), where candidates may follow the strongest one.
 */
export function searchQuery(q: string, types: string[], more: boolean, order = ''): Record<string, string | number | boolean | string[]> {
  return {
    q,
    types,
    explain: true,
    ...(more ? { mode: 'recall', top_k: MORE_TOP_K } : {}),
    ...(order && ORDERS.some((o) => o.value === order) ? { order } : {}),
  }
}

/**
 * The orders a search can list its results in (the API's `order`): relevance blended with quality
 * (the default), seed 002's scope priority (user > project > agent > team > org > public), or
 * seed 003's quality. Which results are found does not change, only their order.
 */
export const ORDERS = [
  { value: '', label: 'relevance (default)' },
  { value: 'scope', label: 'scope: mine first' },
  { value: 'quality', label: 'quality' },
] as const

/** The page. Its state lives in the hash (`#/search?q=…&types=…&scope=…&order=…&more=1`), so a search can be linked and reloaded. */
export async function searchPage(ctx: PageContext): Promise<void> {
  const q = ctx.params.get('q') ?? ''
  const types = (ctx.params.get('types') ?? '').split(',').filter(Boolean)
  const scope = ctx.params.get('scope') ?? ''
  const more = ctx.params.get('more') === '1'
  const order = ctx.params.get('order') ?? ''
  const input = h('input', { id: 'q', name: 'q', type: 'search', value: q, placeholder: 'e.g. selenium login · 登录 验证码', autocomplete: 'off' })
  const typeBoxes = TYPES.map((t) => h('input', { type: 'checkbox', name: 'types', value: t, checked: types.includes(t) }))
  const scopeSelect = h(
    'select',
    { id: 'scope', name: 'scope' },
    h('option', { value: '' }, 'any visible scope'),
    visibleScopes(ctx.me).map((s) => h('option', { value: s, selected: s === scope }, s)),
  )
  const orderSelect = h(
    'select',
    { id: 'order', name: 'order' },
    ORDERS.map((o) => h('option', { value: o.value, selected: o.value === order }, o.label)),
  )
  const results = h('section', { id: 'results', 'aria-live': 'polite', 'aria-label': 'Results' })
  const form = h(
    'form',
    {
      class: 'search',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault()
        const chosen = typeBoxes.filter((b) => b.checked).map((b) => b.value)
        location.hash = `#/search${query({ q: input.value.trim(), types: chosen, scope: scopeSelect.value, order: orderSelect.value })}`
      },
    },
    field('Search knowledge', input),
    h(
      'fieldset',
      { class: 'types' },
      h('legend', null, 'Types'),
      typeBoxes.map((box, i) => h('label', { class: 'check' }, box, TYPES[i]!)),
    ),
    field('Scope', scopeSelect),
    field('Order', orderSelect),
    h('button', { type: 'submit' }, 'Search'),
  )
  mount(ctx.root, h('h1', null, 'Search'), form, results)
  if (!q) {
    input.focus()
    return
  }
  const started = performance.now()
  const response = await call<{ results: SearchHit[]; count: number }>('GET', `/ui/knowledge/search${query(searchQuery(q, types, more, order))}`)
  const hits = scope ? response.results.filter((hit) => hit.scopes.includes(scope)) : response.results
  const best = {
    fulltext: Math.max(0, ...hits.map((r) => r.explain?.fulltext_score ?? 0)),
    vector: Math.max(0, ...hits.map((r) => r.explain?.vector_similarity ?? 0)),
    fused: Math.max(0, ...hits.map((r) => r.explain?.fused ?? 0)),
    quality: Math.max(1, ...hits.map((r) => r.quality_score)),
  }
  const ms = Math.round(performance.now() - started)
  results.dataset.ms = String(ms)
  const moreLink = more
    ? h('a', { href: `#/search${query({ q, types, scope, order })}`, class: 'more' }, 'Show only the closest matches')
    : h(
        'a',
        {
          href: `#/search${query({ q, types, scope, order, more: '1' })}`,
          class: 'more',
          title: `a recall search: up to ${MORE_TOP_K} results, some only near the best one`,
        },
        'Show more',
      )
  mount(
    results,
    h('p', { class: 'count' }, `${hits.length} result${hits.length === 1 ? '' : 's'} in ${ms} ms${more ? ' (recall: wider, less precise)' : ''}`),
    hits.length === 0
      ? notice('info', 'Nothing visible to you matches.')
      : h(
          'ol',
          { class: 'results' },
          hits.map((hit) => resultItem(hit, best)),
        ),
    moreLink,
  )
}
