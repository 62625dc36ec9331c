-- Agent memory on a server (seed 004, issue #27): the documents of an agent that lives in the
-- store instead of a folder on the server's disk — self_awareness.md, knowledge.md, compact.md,
-- the template (system_prompt.md), knowledge files the agent names, and the generated
-- knowledge_function_index.json. An agent is `agent:ID` inside an org: `org` is the writer's org
-- ('' for a principal without one), and every query names the caller's org, so another org's
-- agent is never reached. Every write is a new version (compact.md's versions are its history);
-- the current document is the highest version. `scopes` decide who reads (read permission and a
-- shared scope) and writes (write permission and a shared scope), as for knowledge entries.

CREATE TABLE IF NOT EXISTS agent_documents (
  org         text NOT NULL,
  agent       text NOT NULL,
  name        text NOT NULL,
  version     integer NOT NULL CHECK (version >= 1),
  content     text NOT NULL,
  owner       text NOT NULL,
  scopes      text[] NOT NULL,
  written_by  text NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (org, agent, name, version)
);
