/**
 * The shapes of the `goal` tool (seed 003): the request (`create | focus | complete |
 * abandon | show`) and the tree it answers with. Each schema and its inferred type share a name.
 */
import { z } from 'zod'

/** The actions of the `goal` tool. */
const GOAL_ACTIONS = ['create', 'focus', 'complete', 'abandon', 'show'] as const

/**
 * A trace id: the conversation or run a goal tree belongs to.
 * @example
 * TraceId.parse('trace-2026-03-05-001')
 */
export const TraceId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$/u, 'a trace id is 1-128 letters, digits and . _ : @ + -')

/**
 * A goal id in its tree: `1`, `2`, `1.1`, … (given by `create`).
 * @example
 * GoalId.parse('1.2')
 */
export const GoalId = z.string().regex(/^[1-9][0-9]{0,3}(\.[1-9][0-9]{0,3}){0,7}$/u, 'a goal id is like 1, 2 or 1.3')

/**
 * One request to the `goal` tool. `create` needs `description` (and takes `parent_id`);
 * `focus`, `complete` and `abandon` need `goal_id`; `focus` searches knowledge with the
 * goal's description (`top_k` 3, `min_score` 3 by default); `complete` and `abandon` take a `summary`.
 * @example
 * GoalRequest.parse({ action: 'focus', trace_id: 'trace-1', goal_id: '1' })
 */
export const GoalRequest = z
  .strictObject({
    action: z.enum(GOAL_ACTIONS),
    trace_id: TraceId,
    goal_id: GoalId.optional(),
    parent_id: GoalId.optional(),
    description: z.string().trim().min(1).max(2000).optional(),
    summary: z.string().trim().max(4000).optional(),
    /**
     * `complete`: the goal's trace (the conversation that reached it), to extract knowledge from
     * with the goal and its summary (seed 002: "任务完成:任务完成后的反思总结"). Optional.
     */
    messages: z
      .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant', 'tool']), content: z.string().max(100_000) }))
      .max(1000)
      .optional(),
    top_k: z.coerce.number().int().min(1).max(20).default(3),
    min_score: z.coerce.number().int().min(0).max(5).default(3),
    language: z.enum(['en', 'zh']).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.action === 'create' && v.description === undefined) ctx.addIssue({ code: 'custom', path: ['description'], message: 'create needs a description' })
    if (['focus', 'complete', 'abandon'].includes(v.action) && v.goal_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['goal_id'], message: `${v.action} needs a goal_id` })
    }
  })
export type GoalRequest = z.input<typeof GoalRequest>

/**
 * A goal as the tool shows it.
 * @example
 * Goal.parse(tree.goals[0]).status // 'in_progress'
 */
export const Goal = z.object({
  goal_id: z.string(),
  parent_id: z.string().nullable(),
  description: z.string(),
  status: z.enum(['pending', 'in_progress', 'completed', 'abandoned']),
  focused: z.boolean(),
  knowledge_ids: z.array(z.string()),
  summary: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})
export type Goal = z.output<typeof Goal>

/**
 * A goal tree: its goals, the focused goal, the knowledge attached to it (entries the
 * caller may see, as search results or stored entries), and the tree as text for a model
 * (knowledge wrapped as data under "📚 Related knowledge (n)" / "📚 相关知识 (n 条)").
 * @example
 * const tree = GoalTree.parse(await agent.goal({ action: 'show', trace_id: 'trace-1' }, principal))
 */
export const GoalTree = z.object({
  trace_id: z.string(),
  owner: z.string().nullable(),
  focused: z.string().nullable(),
  goals: z.array(Goal),
  knowledge: z.array(
    z.object({
      id: z.string(),
      task: z.string(),
      content: z.string(),
      types: z.array(z.string()),
      eval: z.object({ score: z.number(), helpful: z.number(), harmful: z.number() }),
    }),
  ),
  text: z.string(),
  /**
   * After `complete` (seed 002's trigger "任务完成"): what extraction from the goal, its summary and
   * its trace saved — `saved` with the ids, `failed` (the goal is completed all the same),
   * `not_configured` (no LLM: nothing extracted) or `skipped` (nothing to learn from: no summary,
   * no trace).
   */
  extraction: z
    .object({ status: z.enum(['saved', 'failed', 'not_configured', 'skipped']), ids: z.array(z.string()), message: z.string().optional() })
    .optional(),
})
export type GoalTree = z.output<typeof GoalTree>
