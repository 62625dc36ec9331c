/**
 * Semantic routing (seed 003, stage 1): the LLM picks up to 2×top_k entries from a hybrid
 * shortlist (default 50) seeing exactly the seed's input — id, types and the first 100
 * characters of task — then the quality rerank runs as usual. It also judges relevance (issue
 * 26): it picks only entries related to the query, fewer than asked or none, and the search
 * returns only what it picked — never filled up with candidates it left out. On a timeout
 * (default 3 s), an error or an unusable answer the hybrid order (already gated for relevance)
 * stands and the response says so (`routing` in the body, `X-KnowHub-Routing` header). Ids the
 * model invents are ignored; an answer of invented ids only is unusable. Decisions are cached
 * while the knowledge table is unchanged (same query, same visible shortlist).
 */
import { z } from 'zod'
import { isKnowHubError } from '../../core/errors.js'
import type { SearchRouting } from '../../core/knowledge.js'
import { createLru } from '../../core/lru.js'
import type { Logger } from '../../core/logger.js'
import type { LlmProvider } from '../../llm/index.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../prompt-data.js'
import type { Fused } from './rank.js'

/** Routing settings (config `search.routing*`). */
export interface RoutingOptions {
  /** `llm`: route every search unless a request says `routing=off`; `off` (default): only requests saying `routing=llm`. */
  mode: 'off' | 'llm'
  /** Hybrid candidates the model sees (default 50). */
  shortlist: number
  /** Time the search waits for the model (default 3000 ms). */
  timeoutMs: number
  /** Decisions kept while the table is unchanged (default 1000; 0: off). */
  cacheSize: number
}

/** Default routing settings. */
export const DEFAULT_ROUTING: RoutingOptions = { mode: 'off', shortlist: 50, timeoutMs: 3000, cacheSize: 1000 }

const Picked = z.object({ ids: z.array(z.string().max(200)).max(500) })

const SYSTEM = [
  'You route a search in a knowledge base for AI agents. Given a query and candidate entries (id, types, the start of their task), pick the entries relevant to the query, most relevant first.',
  'Whatever you pick is put in front of an agent, which follows it: pick only entries that help with the query. Pick fewer than allowed when fewer are relevant, and none when none is.',
  DATA_NOT_INSTRUCTIONS,
  'Answer with one JSON object: {"ids": [the chosen ids]}, or {"ids": []} when no candidate is relevant. Use only ids from the candidates.',
].join('\n')

/** The routed shortlist and what routing did. */
export interface Routed<T extends Fused = Fused> {
  shortlist: T[]
  routing: SearchRouting
}

/** Routes searches (see the module comment). */
export interface Router {
  /**
   * The shortlist for the quality rerank: the model's pick from the first `shortlist` candidates,
   * or the first `size` candidates when routing is off or falls back.
   */
  route<T extends Fused>(
    q: string,
    topK: number,
    fused: T[],
    size: number,
    requested: 'off' | 'llm' | undefined,
    records: (ids: string[]) => Promise<KnowledgeRecord[]>,
    generation: number | undefined,
  ): Promise<Routed<T>>
  /** Forgets every cached decision. */
  clear(): void
}

/**
 * A router over the LLM (absent: a routed request falls back, reason `llm_not_configured`).
 * @example
 * const router = createRouter(llm, { ...DEFAULT_ROUTING, mode: 'llm' }, logger)
 */
export function createRouter(llm: LlmProvider | undefined, options: RoutingOptions, logger: Logger): Router {
  const cache = createLru<string, { generation: number; ids: string[] }>(Math.max(1, options.cacheSize))

  /** The model's pick, known ids only; undefined when it named only invented ids (an empty pick is a judgement: nothing is relevant). */
  async function pick(q: string, topK: number, candidates: KnowledgeRecord[], deadline: AbortSignal): Promise<string[] | undefined> {
    const shown = candidates.map((r) => ({ id: r.id, types: r.types, task: r.task.slice(0, 100) }))
    const messages = [
      { role: 'system' as const, content: `${SYSTEM}\nPick at most ${topK * 2}.` },
      { role: 'user' as const, content: `${dataBlock('The query', q)}\n\n${dataBlock('The candidates', shown)}` },
    ]
    // Ids of entries are ~30 characters: the answer needs no more room than the ids it may pick.
    const ask = z.object({ ids: z.array(z.string().max(64)).max(topK * 2) })
    const answer = await llm!.json('routing', messages, Picked, {
      name: 'routing',
      ask,
      maxTokens: 40 + topK * 2 * 24,
      timeoutMs: options.timeoutMs,
      retries: 0,
      signal: deadline,
    })
    const known = new Set(candidates.map((r) => r.id))
    const picked = [...new Set(answer.ids.filter((id) => known.has(id)))].slice(0, topK * 2)
    return picked.length === 0 && answer.ids.length > 0 ? undefined : picked
  }

  return {
    clear: () => cache.clear(),
    async route<T extends Fused>(
      q: string,
      topK: number,
      fused: T[],
      size: number,
      requested: 'off' | 'llm' | undefined,
      records: (ids: string[]) => Promise<KnowledgeRecord[]>,
      generation: number | undefined,
    ): Promise<Routed<T>> {
      const mode = requested ?? options.mode
      const hybrid = (reason?: string): Routed<T> => ({
        shortlist: fused.slice(0, size),
        routing: reason ? { mode, status: 'fallback', reason } : { mode, status: mode === 'off' ? 'off' : 'used' },
      })
      if (mode === 'off') return hybrid()
      if (!llm) return hybrid('llm_not_configured')
      const considered = fused.slice(0, options.shortlist)
      if (considered.length === 0) return hybrid('no_candidates')
      const key = JSON.stringify([q, topK, considered.map((c) => c.id)])
      let ids = generation !== undefined && options.cacheSize > 0 ? cache.get(key) : undefined
      if (ids?.generation !== generation) ids = undefined
      if (!ids) {
        // One deadline for the whole decision: the repair request after an invalid answer shares it.
        const deadline = AbortSignal.timeout(options.timeoutMs)
        try {
          const picked = await pick(q, topK, await records(considered.map((c) => c.id)), deadline)
          if (picked === undefined) return hybrid('no_known_ids')
          ids = { generation: generation ?? -1, ids: picked }
          if (generation !== undefined && options.cacheSize > 0) cache.set(key, ids)
        } catch (error) {
          const reason =
            deadline.aborted && !isKnowHubError(error) ? 'llm_timeout' : isKnowHubError(error) && error.code.startsWith('llm_') ? error.code : undefined
          if (!reason) throw error
          logger.warn('knowledge.search.routing.fallback', { reason })
          return hybrid(reason)
        }
      }
      const byId = new Map(considered.map((c) => [c.id, c]))
      return { shortlist: ids.ids.map((id) => byId.get(id)!), routing: { mode, status: 'used' } }
    },
  }
}
