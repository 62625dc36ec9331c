-- API tokens. A token is shown once when created; only its SHA-256 hash is kept.
-- Each token carries the principal it authenticates as (ids + permissions).

CREATE TABLE IF NOT EXISTS knowhub_token (
  id           text PRIMARY KEY,
  token_hash   text NOT NULL UNIQUE,
  prefix       text NOT NULL,
  name         text NOT NULL DEFAULT '',
  principal    jsonb NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz,
  last_used_at timestamptz,
  revoked_at   timestamptz
);

CREATE INDEX IF NOT EXISTS knowhub_token_active_idx ON knowhub_token (created_at) WHERE revoked_at IS NULL;
