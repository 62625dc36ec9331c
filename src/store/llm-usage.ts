/**
 * All SQL about LLM token usage: counters per task and model, added to atomically by every
 * KnowHub process on the database, read by `knowhub status`.
 */
import { LlmUsage } from '../core/llm.js'
import type { Queryable } from './database.js'
import { sql } from './sql.js'

/** The usage counters of the LLM. */
export interface LlmUsageStore {
  /** Adds one call's (or a batch's) counts to the task's and model's totals. */
  add(usage: LlmUsage, at: Date): Promise<void>
  /** Every task and model with its totals, by task then model. */
  list(): Promise<LlmUsage[]>
}

/**
 * The usage store over a database.
 * @example
 * await llmUsageStore(db).add({ task: 'extract', model: 'm', calls: 1, failures: 0, prompt_tokens: 10, completion_tokens: 5 }, new Date())
 */
export function llmUsageStore(db: Queryable): LlmUsageStore {
  return {
    async add(u, at) {
      await db.query(sql`
        INSERT INTO knowhub_llm_usage (task, model, calls, failures, prompt_tokens, completion_tokens, updated_at)
        VALUES (${u.task}, ${u.model}, ${u.calls}, ${u.failures}, ${u.prompt_tokens}, ${u.completion_tokens}, ${at})
        ON CONFLICT (task, model) DO UPDATE SET
          calls = knowhub_llm_usage.calls + EXCLUDED.calls,
          failures = knowhub_llm_usage.failures + EXCLUDED.failures,
          prompt_tokens = knowhub_llm_usage.prompt_tokens + EXCLUDED.prompt_tokens,
          completion_tokens = knowhub_llm_usage.completion_tokens + EXCLUDED.completion_tokens,
          updated_at = EXCLUDED.updated_at`)
    },
    async list() {
      const rows = await db.query(sql`
        SELECT task, model, calls, failures, prompt_tokens, completion_tokens FROM knowhub_llm_usage ORDER BY task, model`)
      return rows.map((row) =>
        LlmUsage.parse({
          task: row.task,
          model: row.model,
          calls: Number(row.calls),
          failures: Number(row.failures),
          prompt_tokens: Number(row.prompt_tokens),
          completion_tokens: Number(row.completion_tokens),
        }),
      )
    },
  }
}
