/** Calls to the dashboard's own routes (`/ui/…`, `/session`): JSON in, JSON out, CSRF on writes. */

/** An error answered by the server: its code and message (`{ error: { code, message } }`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

let csrfToken = ''

/** Set once `/ui/me` has answered. */
export function setCsrf(token: string): void {
  csrfToken = token
}

/** A JSON request; throws {@link ApiError} for an error answer. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  const response = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
  const text = await response.text()
  let data: unknown = undefined
  try {
    data = text ? JSON.parse(text) : undefined
  } catch {
    data = undefined
  }
  if (!response.ok) {
    const error = (data as { error?: { code?: string; message?: string } } | undefined)?.error
    throw new ApiError(response.status, error?.code ?? 'http_error', error?.message ?? `HTTP ${response.status}`)
  }
  return data as T
}

/** `?a=1&b=2` from an object (empty values left out). */
export function query(params: Record<string, string | number | boolean | undefined | readonly string[]>): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === '') continue
    if (Array.isArray(value)) {
      if (value.length > 0) search.set(key, value.join(','))
    } else search.set(key, String(value))
  }
  const text = search.toString()
  return text ? `?${text}` : ''
}

export interface Me {
  principal: { user?: string; agent?: string; project?: string; team?: string; org?: string; permissions: string[] }
  caller: string
  mode: 'local' | 'token'
  csrf: string
  features: { llm: boolean; packs: boolean }
}

/** The signed-in principal's visible scopes (its ids and `public`). */
export function visibleScopes(me: Me): string[] {
  const kinds = ['user', 'project', 'agent', 'team', 'org'] as const
  return [...kinds.flatMap((k) => (me.principal[k] ? [`${k}:${me.principal[k]}`] : [])), 'public']
}

export function can(me: Me, permission: string): boolean {
  const p = me.principal.permissions
  return p.includes('hub:admin') || p.includes('admin') || p.includes(permission)
}
