-- Forgetting and retention (issue 31): the audit of erasures. A forget (`knowhub forget user:ID`,
-- DELETE /api/principals/user:ID) and a retention purge (`knowhub purge`) each leave one row here:
-- what kind of erasure, who ran it, in which org, when, and how many rows of each kind went
-- (src/app/erasure.ts). Never any content, and not the forgotten id itself: `subject` is the
-- SHA-256 of `user:ID` (hex), so an auditor who knows the id can check that it was forgotten,
-- while the row names nobody by itself. A purge has no subject.
CREATE TABLE IF NOT EXISTS knowhub_erasure (
  seq      bigserial PRIMARY KEY,
  kind     text NOT NULL CHECK (kind IN ('forget', 'purge')),
  subject  text,
  by       text NOT NULL,
  org      text,
  counts   jsonb NOT NULL,
  at       timestamptz NOT NULL
);
-- Retention purges look for merged and archived entries by age.
CREATE INDEX IF NOT EXISTS knowledge_retention_idx ON knowledge (status, updated_at) WHERE status <> 'active';
