-- Dashboard sessions (issue 27): the session cookie holds a random session id, never the API
-- token. The server keeps the SHA-256 of that id, the token it was signed in with and when it
-- expires; any of N servers on this database accepts it, and signing out ends it everywhere.
CREATE TABLE IF NOT EXISTS knowhub_dashboard_session (
  id_hash    text PRIMARY KEY,
  token_id   text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS knowhub_dashboard_session_expiry_idx ON knowhub_dashboard_session (expires_at);
