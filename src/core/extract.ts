/**
 * Schemas of knowledge extraction from a conversation (seed doc 002; `POST
 * /api/knowledge/extract`). Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { InstantInput, KnowledgeType } from './knowledge.js'
import { nullAsAbsent, nullAsDefault } from './validate.js'

const Id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/u, 'ids are 1-128 characters: letters, digits and . _ @ + -')

/** One part of an OpenAI-style multi-part content: only text parts are read. */
const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() })

/**
 * One message of the conversation, OpenAI-style, with an optional id (kept as the
 * extracted entry's `message_id` and `source.message_id`) and an optional `timestamp`.
 */
export const ExtractMessage = z.looseObject({
  id: nullAsAbsent(z.string().min(1).max(200)),
  role: z.enum(['system', 'user', 'assistant', 'tool', 'developer']),
  content: z
    .union([z.string().max(200_000), z.array(ContentPart).max(100)])
    .nullable()
    .default(''),
  name: nullAsAbsent(z.string().max(200)),
  /** When the message was sent (ISO 8601): the extracted entries are valid from it (issue 31). */
  timestamp: nullAsAbsent(InstantInput),
})
export type ExtractMessage = z.input<typeof ExtractMessage>

/**
 * Whose conversation it was: the ids scopes and owner come from (never from the model).
 * Absent ids default to the caller's; a caller cannot name an id it does not hold.
 */
export const ExtractContext = z.strictObject({
  user: nullAsAbsent(Id),
  agent: nullAsAbsent(Id),
  project: nullAsAbsent(Id),
  team: nullAsAbsent(Id),
  org: nullAsAbsent(Id),
  trace_id: nullAsAbsent(z.string().min(1).max(200)),
  /**
   * The scope of the resource that keeps the conversation's secrets: `user` (the default when
   * the context has a user, else `agent`), or another id of the context to share them wider.
   */
  secrets_scope: nullAsAbsent(z.enum(['user', 'project', 'agent', 'team', 'org'])),
})
export type ExtractContext = z.input<typeof ExtractContext>

/** The body of `POST /api/knowledge/extract`. */
export const ExtractInput = z.strictObject({
  messages: z.array(ExtractMessage).min(1, 'at least one message').max(1000),
  context: nullAsDefault(ExtractContext, () => ExtractContext.parse({})),
  /** `propose`: only say what would be saved; `save`: write it. */
  mode: nullAsDefault(z.enum(['propose', 'save']), () => 'propose' as const),
})
export type ExtractInput = z.input<typeof ExtractInput>

/** Tag categories of user profiles (seed 002). */
export const PROFILE_CATEGORIES = ['preference', 'background', 'habit', 'constraint'] as const

/**
 * What to do with one proposal: a new entry (`add`); a refinement or correction of an existing
 * one (`update`, its previous version kept); a change in the world that replaces an existing
 * entry (`supersede`: the old entry is closed, `valid_to` and `superseded_by`, and the new one
 * added); or nothing new (`noop`, a helpful case for the existing one).
 */
export const ExtractAction = z.enum(['add', 'update', 'supersede', 'noop'])
export type ExtractAction = z.infer<typeof ExtractAction>

/**
 * How an extracted text is supported by the conversation (src/knowledge/grounding.ts): the share
 * of its content words found in the turns it rests on, the embedding similarity when a semantic
 * model is configured, and whether it is in another language than the conversation.
 */
export const ExtractGrounding = z.object({
  coverage: z.number(),
  similarity: z.number().optional(),
  other_language: z.boolean(),
})
export type ExtractGrounding = z.output<typeof ExtractGrounding>

/** One proposed entry and what was (or would be) done with it. */
export const ExtractItem = z.object({
  action: ExtractAction,
  /** The entry written or touched; null for an `add` in `propose` mode. */
  id: z.string().nullable(),
  /** The existing entry an `update`, `supersede` or `noop` is about. */
  existing_id: z.string().nullable(),
  types: z.array(KnowledgeType),
  task: z.string(),
  content: z.string(),
  tags: z.record(z.string(), z.unknown()),
  scopes: z.array(z.string()),
  owner: z.string(),
  /** The messages it rests on (the ids the caller gave them). */
  message_ids: z.array(z.string()),
  /** The conversation turns it rests on: their positions in `messages` (0-based), ids or not. */
  turns: z.array(z.number().int()).default(() => []),
  /** How the turns support it (null from a server before issue 43). */
  grounding: ExtractGrounding.nullable().default(null),
  /** Resources holding secrets from the conversation (save mode). */
  resource_ids: z.array(z.string()),
  /** Confidence after this extraction (user profiles accumulate; others start at 0.5). */
  confidence: z.number(),
  /** Why this action, in words. */
  reason: z.string(),
})
export type ExtractItem = z.output<typeof ExtractItem>

/** The response of `POST /api/knowledge/extract`. */
export const ExtractResult = z.object({
  mode: z.enum(['propose', 'save']),
  items: z.array(ExtractItem),
  /** Secrets found in the conversation: never sent to the model, never in entry content. */
  secrets_found: z.number().int(),
  /** Resources created to hold them (save mode), referenced by the items' `resource_ids`. */
  resources_created: z.array(z.string()),
  /** Requests made to the LLM (at most 2 per extraction). */
  llm_calls: z.number().int(),
  /**
   * Proposals dropped, and why: a user profile without a user in the context; a proposal the
   * conversation does not support (`ungrounded: …`, with its `content` for a person to review);
   * a proposal that breaks the schema (`invalid: …`).
   */
  dropped: z.array(z.object({ task: z.string(), reason: z.string(), content: z.string().optional() })),
  /**
   * What went wrong with the model and was handled, by reason: an answer cut at the token cap
   * (`truncated`: asked again with fewer messages), a decision that broke the schema (`invalid`:
   * left out), an answer unusable even after the repair request (`not_json`, `schema`,
   * `truncated`: nothing of it kept, nothing written for it). The endpoint failing or too slow is
   * an error instead (`llm_failed`, `llm_timeout`).
   */
  problems: z.array(z.object({ stage: z.enum(['propose', 'decide']), reason: z.string(), detail: z.string() })).default(() => []),
  /**
   * Decisions of the model that were refused (an update or supersede naming an entry that was not
   * among the similar ones the caller sees, or one the caller may not edit): the proposal was
   * added as a new entry instead, so nothing is lost.
   */
  refused: z.array(z.object({ task: z.string(), action: ExtractAction, existing_id: z.string().nullable(), reason: z.string() })).default(() => []),
})
export type ExtractResult = z.output<typeof ExtractResult>
