-- Issue 41: seed 002's `visibility` (private | shared | org | public), derived from an entry's
-- scopes and owner by one rule (src/core/visibility.ts says it in TypeScript, and a test checks the
-- two agree), stored as a generated column so that lists and searches filter on it in SQL.

CREATE OR REPLACE FUNCTION knowledge_visibility(scopes text[], owner text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN 'public' = ANY(scopes) THEN 'public'
    WHEN EXISTS (SELECT 1 FROM unnest(scopes) AS s WHERE s LIKE 'org:%') THEN 'org'
    WHEN scopes <@ ARRAY[owner] THEN 'private'
    ELSE 'shared'
  END
$$;

ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS visibility text GENERATED ALWAYS AS (knowledge_visibility(scopes, owner)) STORED;
