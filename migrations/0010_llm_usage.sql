-- Token usage of the LLM per task and model (knowhub status; docs/llm.md). Counters only:
-- prompts and completions are never stored.

CREATE TABLE IF NOT EXISTS knowhub_llm_usage (
  task              text NOT NULL,
  model             text NOT NULL,
  calls             bigint NOT NULL DEFAULT 0,
  failures          bigint NOT NULL DEFAULT 0,
  prompt_tokens     bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  updated_at        timestamptz NOT NULL,
  PRIMARY KEY (task, model)
);
