-- Knowledge entries (seed docs 002 + 003). Vectors live in knowledge_vector,
-- created at start-up for the configured embedder (see src/store/vectors.ts).

CREATE TABLE IF NOT EXISTS knowhub_meta (
  key   text PRIMARY KEY,
  value jsonb NOT NULL
);

CREATE TABLE IF NOT EXISTS knowledge (
  id           text PRIMARY KEY,
  message_id   text NOT NULL DEFAULT '',
  types        text[] NOT NULL,
  task         text NOT NULL,
  tags         jsonb NOT NULL DEFAULT '{}',
  scopes       text[] NOT NULL,
  owner        text NOT NULL,
  content      text NOT NULL,
  resource_ids text[] NOT NULL DEFAULT '{}',
  source       jsonb NOT NULL DEFAULT '{}',
  score        smallint NOT NULL CHECK (score BETWEEN 1 AND 5),
  helpful      integer NOT NULL DEFAULT 0 CHECK (helpful >= 0),
  harmful      integer NOT NULL DEFAULT 0 CHECK (harmful >= 0),
  confidence   real NOT NULL DEFAULT 0.5 CHECK (confidence BETWEEN 0 AND 1),
  status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'merged', 'archived')),
  merged_into  text,
  version      integer NOT NULL DEFAULT 1,
  search_doc   tsvector NOT NULL DEFAULT ''::tsvector,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS knowledge_scopes_idx ON knowledge USING gin (scopes);
CREATE INDEX IF NOT EXISTS knowledge_types_idx ON knowledge USING gin (types);
CREATE INDEX IF NOT EXISTS knowledge_search_idx ON knowledge USING gin (search_doc);
CREATE INDEX IF NOT EXISTS knowledge_owner_idx ON knowledge (owner);
CREATE INDEX IF NOT EXISTS knowledge_list_idx ON knowledge (created_at DESC, id DESC);

-- Every helpful or harmful case, in order (the eval histories).
CREATE TABLE IF NOT EXISTS knowledge_feedback (
  seq          bigserial PRIMARY KEY,
  knowledge_id text NOT NULL REFERENCES knowledge (id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('helpful', 'harmful')),
  body         jsonb NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS knowledge_feedback_entry_idx ON knowledge_feedback (knowledge_id, seq);

-- Previous versions, kept on every edit, evolve or merge.
CREATE TABLE IF NOT EXISTS knowledge_version (
  knowledge_id text NOT NULL REFERENCES knowledge (id) ON DELETE CASCADE,
  version      integer NOT NULL,
  task         text NOT NULL,
  content      text NOT NULL,
  types        text[] NOT NULL,
  tags         jsonb NOT NULL,
  scopes       text[] NOT NULL,
  resource_ids text[] NOT NULL,
  reason       text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (knowledge_id, version)
);
