/**
 * The fixed texts of the agent context in each language, and where the shipped defaults
 * (system-prompt template, self-awareness file) live.
 */
import { fileURLToPath } from 'node:url'
import type { AgentLanguage } from '../core/agent.js'

/**
 * The folder of the shipped defaults: `agent-defaults/<language>/system_prompt.md` and
 * `self_awareness.md` at the package root (the same from src/ and dist/).
 * @example
 * join(AGENT_DEFAULTS_DIR, 'zh', 'self_awareness.md')
 */
export const AGENT_DEFAULTS_DIR = fileURLToPath(new URL('../../agent-defaults/', import.meta.url))

/** Labels by language. */
export interface AgentLabels {
  compactPrefix: string
  profileCaption: string
  relatedCaption: string
  noTask: string
  cutMarker: string
  related: (n: number) => string
  goalTree: (trace: string) => string
  noGoals: string
  focusedOn: (goal: string) => string
}

const LABELS: Record<AgentLanguage, AgentLabels> = {
  en: {
    compactPrefix: '[Loaded compacted memory]',
    profileCaption: 'User profile (most confident first):',
    relatedCaption: 'Knowledge related to the task:',
    noTask: '(no task given yet)',
    cutMarker: '\n[… cut by the token budget]',
    related: (n) => `📚 Related knowledge (${n})`,
    goalTree: (trace) => `🎯 Goal tree (trace ${trace})`,
    noGoals: '(no goals yet: create one with goal(action="create"))',
    focusedOn: (goal) => `Current goal: ${goal}`,
  },
  zh: {
    compactPrefix: '[已加载历史压缩记忆]',
    profileCaption: '用户画像（按置信度从高到低）：',
    relatedCaption: '与当前任务相关的知识：',
    noTask: '（尚未指定任务）',
    cutMarker: '\n[……因 token 预算截断]',
    related: (n) => `📚 相关知识 (${n} 条)`,
    goalTree: (trace) => `🎯 GoalTree（trace ${trace}）`,
    noGoals: '（还没有 goal：用 goal(action="create") 创建）',
    focusedOn: (goal) => `当前 Goal: ${goal}`,
  },
}

/**
 * The labels of a language.
 * @example
 * agentLabels('zh').compactPrefix // '[已加载历史压缩记忆]'
 */
export function agentLabels(language: AgentLanguage): AgentLabels {
  return LABELS[language]
}
