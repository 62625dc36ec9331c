-- Goal trees of agent traces (seed 003): one row per goal. A trace belongs to its owner
-- (`kind:id`, the creating principal's first scope): the same trace id under two owners is
-- two trees, and every read and write names the owners the caller may act as.
-- `focused` marks the goal the agent works on (at most one per tree); `knowledge_ids` are
-- the entries the last focus attached.

CREATE TABLE IF NOT EXISTS goals (
  owner         text NOT NULL,
  trace_id      text NOT NULL,
  goal_id       text NOT NULL,
  parent_id     text,
  position      integer NOT NULL,
  description   text NOT NULL,
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'in_progress', 'completed', 'abandoned')),
  focused       boolean NOT NULL DEFAULT false,
  knowledge_ids text[] NOT NULL DEFAULT '{}',
  summary       text,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  PRIMARY KEY (owner, trace_id, goal_id)
);

CREATE UNIQUE INDEX IF NOT EXISTS goals_one_focus_idx ON goals (owner, trace_id) WHERE focused;
