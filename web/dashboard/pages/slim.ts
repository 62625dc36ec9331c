/** Slim: the proposed merge groups (a dry run), merge them, and un-merge a merged entry. */
import { call } from '../api.js'
import { field, h, mount, notice } from '../dom.js'
import type { PageContext } from '../page.js'

interface SlimResult {
  dry_run: boolean
  considered: number
  truncated: boolean
  groups: { kept_id: string | null; merged_ids: string[]; similarity: number }[]
  merged: number
  skipped: { ids: string[]; reason: string; message: string }[]
}

function groups(result: SlimResult): HTMLElement {
  if (result.groups.length === 0 && result.skipped.length === 0) return notice('info', `No near-duplicates among ${result.considered} entries.`)
  return h(
    'div',
    null,
    h(
      'p',
      { class: 'count' },
      `${result.dry_run ? 'Proposed' : 'Merged'}: ${result.groups.length} group(s) among ${result.considered} entries${result.dry_run ? '' : `; ${result.merged} originals merged`}`,
    ),
    h(
      'ol',
      { class: 'groups' },
      result.groups.map((g) =>
        h(
          'li',
          { class: 'group' },
          h('span', null, `similarity ≥ ${g.similarity.toFixed(3)}: `),
          g.merged_ids.map((id, i) => [i > 0 ? ' + ' : '', h('a', { href: `#/entry/${encodeURIComponent(id)}` }, id)]),
          g.kept_id ? [' → ', h('a', { href: `#/entry/${encodeURIComponent(g.kept_id)}`, class: 'kept' }, g.kept_id)] : null,
        ),
      ),
    ),
    result.skipped.length > 0
      ? h(
          'ul',
          { class: 'skipped' },
          result.skipped.map((s) => h('li', null, `${s.reason}: ${s.ids.join(', ')} — ${s.message}`)),
        )
      : null,
  )
}

/** `#/slim` */
export async function slimPage(ctx: PageContext): Promise<void> {
  const threshold = h('input', { id: 'threshold', name: 'threshold', type: 'number', min: '0.5', max: '1', step: '0.01', value: '0.9' })
  const overlap = h('input', { id: 'min-overlap', name: 'min_overlap', type: 'number', min: '0', max: '1', step: '0.05', value: '0.5' })
  const out = h('section', { id: 'slim-result', 'aria-live': 'polite' })
  const unmergeId = h('input', { id: 'unmerge-id', name: 'unmerge', placeholder: 'knowledge-… (the merged entry)' })
  const run = (dryRun: boolean) => async () => {
    try {
      mount(out, notice('info', dryRun ? 'Comparing…' : 'Merging…'))
      const result = await call<SlimResult>('POST', '/ui/knowledge/slim', {
        dry_run: dryRun,
        threshold: Number(threshold.value),
        min_overlap: Number(overlap.value),
      })
      mount(out, groups(result))
    } catch (error) {
      mount(out, notice('error', (error as Error).message))
    }
  }
  const unmerge = async (event: Event) => {
    event.preventDefault()
    try {
      const result = await call<{ id: string; restored_ids: string[] }>('POST', `/ui/knowledge/${encodeURIComponent(unmergeId.value.trim())}/unmerge`)
      mount(out, notice('ok', `Un-merged ${result.id} (now archived); restored ${result.restored_ids.join(', ')}`))
    } catch (error) {
      mount(out, notice('error', (error as Error).message))
    }
  }
  mount(
    ctx.root,
    h('h1', null, 'Slim'),
    h(
      'p',
      { class: 'muted' },
      'Near-duplicates by vector similarity and word overlap, in identical scopes. Nothing is deleted: originals become "merged" and can be restored.',
    ),
    h('div', { class: 'inline' }, field('Similarity threshold', threshold), field('Word overlap', overlap)),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', id: 'dry-run', onclick: run(true) }, 'Propose (dry run)'),
      h('button', { type: 'button', id: 'merge', class: 'danger', onclick: run(false) }, 'Merge'),
    ),
    out,
    h('h2', null, 'Un-merge'),
    h('form', { class: 'inline', onsubmit: unmerge }, field('Merged entry id', unmergeId), h('button', { type: 'submit', id: 'unmerge' }, 'Un-merge')),
  )
}
