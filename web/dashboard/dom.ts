/**
 * The one way the dashboard makes DOM: `h(tag, props, ...children)`. Children that are
 * strings become text nodes (never HTML); attributes go through `setAttribute`, event
 * handlers through `addEventListener`; a link may only point inside the dashboard. No
 * `innerHTML` anywhere: knowledge text, tags, pack files and resource bodies are data.
 */
export type Child = Node | string | number | null | undefined | false | Child[]

export interface Props {
  [name: string]: unknown
}

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const c of child) append(parent, c)
    return
  }
  parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child)
}

/** Only in-dashboard links: `#/…` routes and same-origin paths. */
function safeHref(value: string): string {
  return /^(#|\/(?!\/))/.test(value) ? value : '#/'
}

function setProp(el: HTMLElement, name: string, value: unknown): void {
  if (value === undefined || value === null || value === false) return
  if (name.startsWith('on') && typeof value === 'function') {
    el.addEventListener(name.slice(2), value as EventListener)
    return
  }
  if (name.startsWith('on')) return // never a string handler
  if (name === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value)
  else if (name === 'checked') (el as HTMLInputElement).checked = Boolean(value)
  else if (name === 'href') el.setAttribute('href', safeHref(String(value)))
  else if (name === 'width') el.style.width = String(value)
  else if (name === 'height') el.style.height = String(value)
  else el.setAttribute(name === 'className' ? 'class' : name, value === true ? '' : String(value))
}

/**
 * Makes an element.
 * @example
 * h('p', { class: 'note' }, 'Saved ', h('b', {}, entry.task))
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  if (props) for (const [name, value] of Object.entries(props)) setProp(el, name, value)
  append(el, children)
  return el
}

/** Replaces the children of `el`. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, children)
}

/** A labelled form field: `<label>Text <input …></label>`. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h('label', { class: 'field' }, h('span', { class: 'label' }, label), control, hint ? h('small', { class: 'hint' }, hint) : null)
}

/** A horizontal bar for a value out of `max`, with its number. */
export function bar(label: string, value: number | null | undefined, max: number, text?: string): HTMLElement {
  const ratio = value === null || value === undefined || max <= 0 ? 0 : Math.max(0, Math.min(1, value / max))
  return h(
    'div',
    { class: 'bar-row', title: `${label}: ${text ?? value ?? '—'}` },
    h('span', { class: 'bar-label' }, label),
    h(
      'span',
      { class: 'bar-track', role: 'img', 'aria-label': `${label} ${text ?? value ?? 'none'}` },
      h('span', { class: 'bar-fill', width: `${(ratio * 100).toFixed(1)}%` }),
    ),
    h('span', { class: 'bar-value' }, text ?? (value === null || value === undefined ? '—' : String(Math.round(value * 1000) / 1000))),
  )
}

/** A message line (`error` or `ok`), announced to screen readers. */
export function notice(kind: 'error' | 'ok' | 'info', text: string): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text)
}

/** Short date-time text. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC'
}
