/**
 * The `goal` tool (seed 003): the agent's goal tree for a trace. `focus` injects the
 * knowledge related to the goal (searched with its description) into the tree it answers,
 * under "📚 Related knowledge (n)", wrapped as data.
 */
import { z } from 'zod'
import { GoalId, TraceId } from '../core/goals.js'
import { defineTool } from './define.js'

/**
 * `goal` → `POST /api/goals`.
 * @example
 * await kit.callTool('goal', { action: 'create', trace_id: 'run-42', description: 'Log in to site A' })
 * await kit.callTool('goal', { action: 'focus', trace_id: 'run-42', goal_id: '1' }) // the tree + 📚 Related knowledge
 */
export const goalTool = defineTool({
  name: 'goal',
  description:
    'Your goal tree for this trace. create: add a goal (description, optional parent_id). focus: work on a goal — KnowHub searches knowledge with ' +
    'its description and shows it under "Related knowledge"; enough knowledge → plan and create sub-goals; not enough → research, save it with ' +
    'knowledge_save, then focus again. complete / abandon: finish a goal with a summary. show: the tree.',
  input: z.strictObject({
    action: z.enum(['create', 'focus', 'complete', 'abandon', 'show']).describe('What to do.'),
    trace_id: TraceId.describe('The trace (run or conversation) the goal tree belongs to.'),
    goal_id: GoalId.optional().describe('The goal to focus, complete or abandon (e.g. "1" or "1.2").'),
    parent_id: GoalId.optional().describe('create: the parent goal (absent: a top-level goal).'),
    description: z.string().trim().min(1).max(2000).optional().describe('create: what the goal is.'),
    summary: z
      .string()
      .trim()
      .max(4000)
      .optional()
      .describe('complete / abandon: the outcome or the reason. On complete, KnowHub learns from it (with an LLM configured): write what worked and why.'),
    top_k: z.number().int().min(1).max(20).default(3).describe('focus: how many knowledge entries to attach.'),
    min_score: z.number().int().min(0).max(5).default(3).describe('focus: leave out entries scored below this.'),
  }),
  async handler(args, { backend }) {
    if (!backend.agent) throw new Error('this backend has no goal trees')
    const tree = await backend.agent.goal(args)
    const learned =
      tree.extraction?.status === 'saved' && tree.extraction.ids.length > 0 ? `\n🧠 Learned from this goal: ${tree.extraction.ids.join(', ')}` : ''
    return { text: `${tree.text}${learned}`, data: tree }
  },
})
