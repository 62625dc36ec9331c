/**
 * Goal trees with knowledge focus (seed 003 "知识注入机制"): `create | focus | complete |
 * abandon | show`. `focus` searches knowledge with the goal's description, attaches the
 * results to the goal, persists the tree and answers it with a related-knowledge section;
 * focusing again after new knowledge was saved finds it. A tree belongs to its owner (the
 * caller's first scope when it was created); a caller reaches only trees of its own scopes,
 * and sees attached knowledge only as far as it may see those entries now.
 */
import type { Clock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import { defaultOwnerOf, memberScopes, requirePermission, type Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import { wrapEntries, type EntryView } from '../core/wrap-entries.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { GoalRecord, GoalStore } from '../store/agent/goals.js'
import { GoalRequest, type Goal, type GoalTree } from '../core/goals.js'
import { agentLabels, type AgentLabels } from './labels.js'
import type { AgentLanguage } from '../core/agent.js'
import type { Logger } from '../core/logger.js'
import type { z } from 'zod'
import type { ExtractFn } from './compact.js'

/** Most goals in one tree. */
export const MAX_GOALS_PER_TREE = 500

/** What the goal operations need. */
export interface GoalDeps {
  goals: GoalStore
  knowledge: Pick<KnowledgeService, 'search' | 'activeViews'>
  clock: Clock
  language: AgentLanguage
  /** Extraction when a goal completes (with an LLM; absent: `not_configured`). */
  extract?: ExtractFn | undefined
  logger?: Logger | undefined
}

const MARK: Record<Goal['status'], string> = { pending: '[ ]', in_progress: '[→]', completed: '[✓]', abandoned: '[✗]' }

function toGoal(r: GoalRecord): Goal {
  return {
    goal_id: r.goal_id,
    parent_id: r.parent_id,
    description: r.description,
    status: r.status,
    focused: r.focused,
    knowledge_ids: r.knowledge_ids,
    summary: r.summary,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  }
}

/** The tree as text: one line per goal (indented under its parent), then the focused goal's knowledge. */
function renderTree(traceId: string, goals: readonly Goal[], knowledge: readonly EntryView[], labels: AgentLabels): string {
  const lines = [labels.goalTree(traceId)]
  const focused = goals.find((g) => g.focused)
  if (focused) lines.push(labels.focusedOn(`${focused.goal_id} ${focused.description}`))
  if (goals.length === 0) lines.push(labels.noGoals)
  const children = (parent: string | null) => goals.filter((g) => g.parent_id === parent)
  const walk = (parent: string | null, depth: number) => {
    for (const goal of children(parent)) {
      const summary = goal.summary ? ` — ${goal.summary}` : ''
      const attached = goal.knowledge_ids.length > 0 ? ` 📚 ${goal.knowledge_ids.length}` : ''
      lines.push(`${'  '.repeat(depth)}- ${MARK[goal.status]} ${goal.goal_id} ${goal.description}${summary}${goal.focused ? ' ←' : ''}${attached}`)
      walk(goal.goal_id, depth + 1)
    }
  }
  walk(null, 0)
  if (focused) lines.push('', labels.related(knowledge.length), ...(knowledge.length > 0 ? [wrapEntries(knowledge)] : []))
  return lines.join('\n')
}

/** The owner of the caller's tree `traceId`: the first of its scopes that has one, else the one a new tree gets. */
async function treeOwner(deps: GoalDeps, traceId: string, principal: Principal): Promise<{ owner: string | undefined; exists: boolean }> {
  const mine = memberScopes(principal)
  const found = await deps.goals.owners(traceId, mine)
  const owner = mine.find((scope) => found.includes(scope))
  return owner ? { owner, exists: true } : { owner: defaultOwnerOf(principal), exists: false }
}

/** The entries attached to the focused goal that the caller may see now, in the attached order. */
async function attachedKnowledge(deps: GoalDeps, goals: readonly Goal[], principal: Principal): Promise<EntryView[]> {
  return deps.knowledge.activeViews(goals.find((g) => g.focused)?.knowledge_ids ?? [], principal)
}

async function view(deps: GoalDeps, owner: string | null, traceId: string, principal: Principal, labels: AgentLabels, fresh?: EntryView[]): Promise<GoalTree> {
  const goals = owner ? (await deps.goals.tree(owner, traceId)).map(toGoal) : []
  const knowledge = fresh ?? (await attachedKnowledge(deps, goals, principal))
  const shown = knowledge.map((e) => ({ id: e.id, task: e.task, content: e.content, types: [...e.types], eval: e.eval }))
  return {
    trace_id: traceId,
    owner,
    focused: goals.find((g) => g.focused)?.goal_id ?? null,
    goals,
    knowledge: shown,
    text: renderTree(traceId, goals, knowledge, labels),
  }
}

function notFound(traceId: string, goalId: string | undefined): KnowHubError {
  return new KnowHubError('not_found', `No goal ${goalId ?? ''} in your goal tree of trace ${traceId}`.replace('  ', ' '), {
    trace_id: traceId,
    goal_id: goalId,
  })
}

/** Creates a goal under `parent_id` (or at the top) with the next free id (`2`, `1.3`, …). */
async function createGoal(deps: GoalDeps, owner: string, input: { trace_id: string; parent_id?: string | undefined; description: string }): Promise<void> {
  const tree = await deps.goals.tree(owner, input.trace_id)
  if (tree.length >= MAX_GOALS_PER_TREE) {
    throw new KnowHubError('too_large', `The goal tree of trace ${input.trace_id} has ${tree.length} goals; the limit is ${MAX_GOALS_PER_TREE}`, {
      trace_id: input.trace_id,
    })
  }
  const parent = input.parent_id ?? null
  if (parent !== null && !tree.some((g) => g.goal_id === parent)) throw notFound(input.trace_id, parent)
  const at = deps.clock.now()
  for (let attempt = 0; attempt < 5; attempt++) {
    const siblings = (await deps.goals.tree(owner, input.trace_id)).filter((g) => g.parent_id === parent)
    const next = Math.max(0, ...siblings.map((g) => Number(g.goal_id.split('.').at(-1)))) + 1
    const goalId = parent === null ? String(next) : `${parent}.${next}`
    const position = tree.length + attempt
    const record: GoalRecord = {
      owner,
      trace_id: input.trace_id,
      goal_id: goalId,
      parent_id: parent,
      position,
      description: input.description,
      status: 'pending',
      focused: false,
      knowledge_ids: [],
      summary: null,
      created_at: at,
      updated_at: at,
    }
    if (await deps.goals.insert(record)) return
  }
  throw new KnowHubError('conflict', `Could not create the goal: trace ${input.trace_id} changed concurrently five times; try again`, {
    trace_id: input.trace_id,
  })
}

/**
 * Runs one `goal` tool request for `principal` and answers the tree.
 * @example
 * await runGoal(deps, { action: 'create', trace_id: 't1', description: 'Log in to site A' }, principal)
 * const tree = await runGoal(deps, { action: 'focus', trace_id: 't1', goal_id: '1' }, principal)
 * tree.text // '🎯 Goal tree (trace t1)\n…\n📚 Related knowledge (2)\n<knowledge_entries …'
 */
export async function runGoal(deps: GoalDeps, raw: unknown, principal: Principal): Promise<GoalTree> {
  const input = parseWith(GoalRequest, raw, 'goal request')
  requirePermission(principal, input.action === 'show' ? 'read' : 'write')
  const labels = agentLabels(input.language ?? deps.language)
  const { owner, exists } = await treeOwner(deps, input.trace_id, principal)
  if (input.action === 'show') return view(deps, exists ? (owner as string) : null, input.trace_id, principal, labels)
  if (owner === undefined) throw new KnowHubError('forbidden', 'A goal tree needs a principal with at least one id (user, agent, project, team or org)')
  if (input.action === 'create') {
    await createGoal(deps, owner, { trace_id: input.trace_id, parent_id: input.parent_id, description: input.description as string })
    return view(deps, owner, input.trace_id, principal, labels)
  }
  const goalId = input.goal_id as string
  if (!exists) throw notFound(input.trace_id, goalId)
  const at = deps.clock.now()
  if (input.action === 'focus') {
    const goal = (await deps.goals.tree(owner, input.trace_id)).find((g) => g.goal_id === goalId)
    if (!goal) throw notFound(input.trace_id, goalId)
    // An injection (attached to the goal unasked): the injection bar applies; a top_k above 5 asks for recall and is carried as searched.
    const found = await deps.knowledge.search({ q: goal.description, top_k: input.top_k, min_score: input.min_score }, principal, { injection: true })
    await deps.goals.focus(
      owner,
      input.trace_id,
      goalId,
      found.results.map((r) => r.id),
      at,
    )
    return view(deps, owner, input.trace_id, principal, labels, found.results)
  }
  const status = input.action === 'complete' ? 'completed' : 'abandoned'
  const changed = await deps.goals.setStatus(owner, input.trace_id, goalId, status, input.summary ?? null, at)
  if (!changed) throw notFound(input.trace_id, goalId)
  const tree = await view(deps, owner, input.trace_id, principal, labels)
  if (status !== 'completed') return tree
  const goal = tree.goals.find((g) => g.goal_id === goalId)!
  return { ...tree, extraction: await extractOnCompletion(deps, goal, input, principal) }
}

/**
 * Seed 002's trigger "任务完成:任务完成后的反思总结": when a goal completes, extraction (in save mode,
 * as compaction runs it) from the goal's trace given with the request, then the goal and its summary
 * — the reflection. Its failure is reported, not thrown: the goal is completed by then.
 */
async function extractOnCompletion(
  deps: GoalDeps,
  goal: Goal,
  input: z.output<typeof GoalRequest>,
  principal: Principal,
): Promise<NonNullable<GoalTree['extraction']>> {
  if (!deps.extract) return { status: 'not_configured', ids: [] }
  const trace = (input.messages ?? []).filter((m) => m.role !== 'system' && m.content.trim() !== '')
  if (trace.length === 0 && !goal.summary) return { status: 'skipped', ids: [] }
  const messages = [
    ...trace.map((m) => ({ role: m.role === 'tool' ? ('assistant' as const) : m.role, content: m.content })),
    { role: 'user' as const, content: goal.description },
    ...(goal.summary ? [{ role: 'assistant' as const, content: goal.summary }] : []),
  ]
  try {
    const context = { ...(principal.agent ? { agent: principal.agent } : {}), trace_id: input.trace_id }
    const result = await deps.extract({ messages, context, mode: 'save' }, principal)
    return { status: 'saved', ids: result.items.flatMap((item) => (item.id ? [item.id] : [])) }
  } catch (error) {
    deps.logger?.warn('agent.goal.extract_failed', {
      trace_id: input.trace_id,
      goal_id: goal.goal_id,
      code: (error as { code?: string }).code ?? 'internal_error',
    })
    return { status: 'failed', ids: [], message: (error as Error).message }
  }
}
