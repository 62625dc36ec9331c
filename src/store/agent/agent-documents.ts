/**
 * All SQL about stored agents' documents (migration 0046). A document is `(org, agent, name)`;
 * every write adds a version. Every query names the caller's org, and every read names the
 * scopes the caller can see: visibility is enforced here, in the query.
 */
import type { Database } from '../database.js'
import { sql } from '../sql.js'

/** One stored version of an agent's document. */
export interface AgentDocumentRecord {
  org: string
  agent: string
  name: string
  version: number
  content: string
  owner: string
  scopes: string[]
  written_by: string
  created_at: Date
}

/** A version without its content (lists). */
export type AgentDocumentHead = Omit<AgentDocumentRecord, 'content'> & { bytes: number }

/** The agent document queries. */
export interface AgentDocumentStore {
  /** The agents of an org with at least one current document visible to `visible`, by name. */
  agents(org: string, visible: readonly string[]): Promise<Array<{ agent: string; documents: string[]; updated_at: Date }>>
  /** The current version of each of an agent's documents that `visible` can see, by name. */
  current(org: string, agent: string, visible: readonly string[]): Promise<AgentDocumentHead[]>
  /** One document (its current version, or `version`) when `visible` can see it. */
  get(org: string, agent: string, name: string, visible: readonly string[], version?: number): Promise<AgentDocumentRecord | undefined>
  /** Every version of a document (newest first) when its current version is visible. */
  versions(org: string, agent: string, name: string, visible: readonly string[]): Promise<AgentDocumentHead[]>
  /** The current version's number and scopes, whoever may see it (for write checks); undefined: no such document. */
  head(org: string, agent: string, name: string): Promise<{ version: number; scopes: string[]; owner: string } | undefined>
  /** Whether the agent has any document in the org, whoever may see it. */
  exists(org: string, agent: string): Promise<boolean>
  /** Adds a version; false when `record.version` is taken (a concurrent write came first). */
  insert(record: AgentDocumentRecord): Promise<boolean>
}

const HEAD = sql.raw('org, agent, name, version, owner, scopes, written_by, created_at, octet_length(content) AS bytes')
const FULL = sql.raw('org, agent, name, version, owner, scopes, written_by, created_at, content')

function toHead(row: Record<string, unknown>): AgentDocumentHead {
  return {
    org: row.org as string,
    agent: row.agent as string,
    name: row.name as string,
    version: Number(row.version),
    owner: row.owner as string,
    scopes: (row.scopes as string[] | null) ?? [],
    written_by: row.written_by as string,
    created_at: new Date(row.created_at as string | Date),
    bytes: Number(row.bytes),
  }
}

function toRecord(row: Record<string, unknown>): AgentDocumentRecord {
  const { bytes: _bytes, ...head } = toHead({ ...row, bytes: 0 })
  return { ...head, content: row.content as string }
}

/**
 * The agent document queries over a database.
 * @example
 * const docs = agentDocumentStore(store.db)
 * const knowledge = await docs.get('acme', 'book_agent', 'knowledge.md', ['agent:book_agent', 'org:acme', 'public'])
 */
export function agentDocumentStore(db: Pick<Database, 'query'>): AgentDocumentStore {
  const currentRows = (org: string, agent: string) => sql`SELECT DISTINCT ON (name) * FROM agent_documents
    WHERE org = ${org} AND agent = ${agent} ORDER BY name, version DESC`
  return {
    async agents(org, visible) {
      const rows = await db.query<{ agent: string; documents: string[]; updated_at: string | Date }>(sql`
        SELECT agent, array_agg(name ORDER BY name) AS documents, max(created_at) AS updated_at FROM (
          SELECT DISTINCT ON (agent, name) agent, name, scopes, created_at FROM agent_documents
          WHERE org = ${org} ORDER BY agent, name, version DESC
        ) AS latest WHERE scopes && ${visible}::text[] GROUP BY agent ORDER BY agent`)
      return rows.map((row) => ({ agent: row.agent, documents: row.documents, updated_at: new Date(row.updated_at) }))
    },
    async current(org, agent, visible) {
      const rows = await db.query(sql`SELECT ${HEAD} FROM (${currentRows(org, agent)}) AS latest WHERE scopes && ${visible}::text[] ORDER BY name`)
      return rows.map(toHead)
    },
    async get(org, agent, name, visible, version) {
      // A version is visible when the document's current version is: scopes changed later decide.
      const rows = await db.query(sql`SELECT ${FULL} FROM agent_documents AS d
        WHERE org = ${org} AND agent = ${agent} AND name = ${name}
          AND ${version === undefined ? sql`version = (SELECT max(version) FROM agent_documents WHERE org = ${org} AND agent = ${agent} AND name = ${name})` : sql`version = ${version}`}
          AND (SELECT scopes FROM agent_documents WHERE org = ${org} AND agent = ${agent} AND name = ${name} ORDER BY version DESC LIMIT 1) && ${visible}::text[]`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },
    async versions(org, agent, name, visible) {
      const rows = await db.query(sql`SELECT ${HEAD} FROM agent_documents
        WHERE org = ${org} AND agent = ${agent} AND name = ${name}
          AND (SELECT scopes FROM agent_documents WHERE org = ${org} AND agent = ${agent} AND name = ${name} ORDER BY version DESC LIMIT 1) && ${visible}::text[]
        ORDER BY version DESC`)
      return rows.map(toHead)
    },
    async head(org, agent, name) {
      const rows = await db.query<{ version: number; scopes: string[]; owner: string }>(sql`SELECT version, scopes, owner FROM agent_documents
        WHERE org = ${org} AND agent = ${agent} AND name = ${name} ORDER BY version DESC LIMIT 1`)
      return rows[0] ? { version: Number(rows[0].version), scopes: rows[0].scopes, owner: rows[0].owner } : undefined
    },
    async exists(org, agent) {
      const rows = await db.query(sql`SELECT 1 FROM agent_documents WHERE org = ${org} AND agent = ${agent} LIMIT 1`)
      return rows.length > 0
    },
    async insert(r) {
      const rows = await db.query(sql`INSERT INTO agent_documents (org, agent, name, version, content, owner, scopes, written_by, created_at)
        VALUES (${r.org}, ${r.agent}, ${r.name}, ${r.version}, ${r.content}, ${r.owner}, ${r.scopes}::text[], ${r.written_by}, ${r.created_at.toISOString()})
        ON CONFLICT (org, agent, name, version) DO NOTHING RETURNING version`)
      return rows.length > 0
    },
  }
}
