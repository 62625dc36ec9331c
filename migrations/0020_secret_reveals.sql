-- The audit log of secret reveals: one row each time the dashboard shows a resource's
-- secure_body to a person (src/resources/reveal.ts). Who (the principal's ids and the
-- token id), which resource (id and owner namespace), when. Never the secret.
CREATE TABLE IF NOT EXISTS knowhub_secret_reveal (
  seq         bigserial PRIMARY KEY,
  resource_id text NOT NULL,
  owner       text NOT NULL,
  caller      text NOT NULL,
  principal   jsonb NOT NULL,
  via         text NOT NULL,
  revealed_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS knowhub_secret_reveal_resource_idx ON knowhub_secret_reveal (resource_id, owner, seq);
