/**
 * The `agent_compact` tool (seed 004: past the threshold, the history is compacted into the
 * agent's compact memory and knowledge is extracted from it). Over a server (HTTP, `/mcp`) it
 * compacts the agent stored in the caller's org; in-process (`knowhub mcp` on this machine) the
 * agent's folder here.
 */
import { z } from 'zod'
import { AgentName, HistoryMessage } from '../core/agent.js'
import { defineTool } from './define.js'

/**
 * `agent_compact` → `POST /api/agents/{agent}/compact`.
 * @example
 * await kit.callTool('agent_compact', { agent: 'book_agent', history, trace_id: 'run-42' })
 */
export const agentCompactTool = defineTool({
  name: 'agent_compact',
  description:
    'Compact your long conversation history into your compact memory (loaded as an assistant message at your next start) once it is past ' +
    'the threshold (default 70,000 tokens), and extract knowledge from the compacted part. Continue with the recent messages it answers.',
  input: z.strictObject({
    agent: AgentName.describe('Your agent name.'),
    history: z.array(HistoryMessage).min(1).max(100_000).describe('The conversation so far: { role, content } messages, oldest first.'),
    threshold: z.number().int().min(100).optional().describe('Compact past this many tokens (default: the server’s, 70,000).'),
    keep_recent: z.number().int().min(0).optional().describe('Recent tokens kept as they are (default a quarter of the threshold).'),
    trace_id: z.string().min(1).max(200).optional().describe('The trace (run) the history belongs to, recorded by extraction.'),
  }),
  async handler({ agent, ...body }, { backend }) {
    if (!backend.agent) throw new Error('this backend has no agent compaction')
    const result = await backend.agent.compact({ agent, ...body })
    const text = result.compacted
      ? `Compacted ${result.summarized_messages} messages (${result.tokens} tokens) into ${result.memory_path ?? 'the compact memory'} ` +
        `(${result.memory_tokens ?? 0} tokens); continue with the ${result.kept.length} recent messages.` +
        (result.extraction
          ? ` Extraction: ${result.extraction.status}${result.extraction.ids.length > 0 ? ` (${result.extraction.ids.join(', ')})` : ''}.`
          : '')
      : `${result.tokens} tokens, under the threshold of ${result.threshold}: nothing compacted.`
    return { text, data: result }
  },
})
