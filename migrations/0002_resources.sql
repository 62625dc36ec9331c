-- Resources (seed doc 003): code, credentials, cookies and other raw material
-- that knowledge entries reference by id. `id` is a path-like key such as
-- `code/selenium/login`. The secret part is stored only as an AES-256-GCM
-- envelope (`kh1.<key id>.<iv>.<tag>.<ciphertext>`, see src/resources/secrets.ts);
-- the plaintext never reaches the database.

CREATE TABLE IF NOT EXISTS resources (
  id             text PRIMARY KEY,
  title          text NOT NULL,
  body           text NOT NULL DEFAULT '',
  secure_body    text,
  secret_key_id  text,
  content_type   text NOT NULL,
  metadata       jsonb NOT NULL DEFAULT '{}',
  scopes         text[] NOT NULL,
  owner          text NOT NULL,
  version        integer NOT NULL DEFAULT 1,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  CHECK ((secure_body IS NULL) = (secret_key_id IS NULL))
);

CREATE INDEX IF NOT EXISTS resources_scopes_idx ON resources USING gin (scopes);
CREATE INDEX IF NOT EXISTS resources_owner_idx ON resources (owner);
CREATE INDEX IF NOT EXISTS resources_content_type_idx ON resources (content_type);
CREATE INDEX IF NOT EXISTS resources_secret_key_idx ON resources (secret_key_id) WHERE secret_key_id IS NOT NULL;
