-- Every read of a secret (issue 27), not only the dashboard's reveals: the reveal log of 0020
-- becomes the audit of secure_body reads. One row per read through any surface: the API
-- (GET /api/resource/{id}), MCP and agent tools (resource_get), the dashboard's reveal, backups.
-- `route` names the operation; `orgs` the `org:ID` scopes whose admins may see the row (the
-- resource's org scopes, an org owner, and the reader's org when the reader is the owner).
-- Never the secret.
ALTER TABLE knowhub_secret_reveal ADD COLUMN IF NOT EXISTS route text NOT NULL DEFAULT '';
ALTER TABLE knowhub_secret_reveal ADD COLUMN IF NOT EXISTS orgs text[] NOT NULL DEFAULT '{}';
UPDATE knowhub_secret_reveal SET route = 'POST /reveal' WHERE route = '' AND via = 'dashboard';
UPDATE knowhub_secret_reveal SET orgs = ARRAY['org:' || (principal ->> 'org')]
  WHERE orgs = '{}' AND principal ->> 'org' IS NOT NULL;
CREATE INDEX IF NOT EXISTS knowhub_secret_reveal_owner_idx ON knowhub_secret_reveal (owner, seq);
CREATE INDEX IF NOT EXISTS knowhub_secret_reveal_orgs_idx ON knowhub_secret_reveal USING gin (orgs);
