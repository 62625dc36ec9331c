-- Validity in time (issue 31, docs/knowledge.md "Validity in time"). An entry is valid from
-- `valid_from` (when the fact became true: the source message's time when known, else when it
-- was saved; `created_at` stays when it was recorded) until `valid_to` (NULL while current).
-- A supersession closes the old entry (`valid_to`, `superseded_by`) and links the new one
-- (`supersedes`), in one transaction (src/store/knowledge/validity.ts). `expires_at` is
-- retention: past it, an entry leaves search and the agent context, like an expired cookie.
-- The links are plain ids, not foreign keys: an export of one scope, or an import in batches,
-- may name an entry that is elsewhere or not yet written, and a link to an entry since deleted
-- still tells that the old one was superseded.

ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS valid_from timestamptz;
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS valid_to timestamptz;
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS superseded_by text;
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS supersedes text;
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS expires_at timestamptz;

-- Existing entries: valid from their source timestamp when it is an ISO date (what saves have
-- written since the first version), else from when they were saved.
CREATE OR REPLACE FUNCTION knowhub_iso_timestamp(value text) RETURNS timestamptz LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF value IS NULL OR value !~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$' THEN
    RETURN NULL;
  END IF;
  -- A date-only or zone-less stamp is read as UTC (as JavaScript's Date.parse reads an ISO date).
  IF value ~ '(Z|[+-]\d{2}(:?\d{2})?)$' THEN
    RETURN value::timestamptz;
  END IF;
  RETURN (value::timestamp) AT TIME ZONE 'UTC';
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;
UPDATE knowledge SET valid_from = coalesce(knowhub_iso_timestamp(source->>'timestamp'), created_at) WHERE valid_from IS NULL;
DROP FUNCTION knowhub_iso_timestamp(text);
ALTER TABLE knowledge ALTER COLUMN valid_from SET NOT NULL;

-- A row written without valid_from (raw SQL, an older writer) is valid from its created_at.
-- The WHEN clause keeps the function off the path of every write that gives one.
CREATE OR REPLACE FUNCTION knowledge_valid_from_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.valid_from := NEW.created_at;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS knowledge_valid_from_default ON knowledge;
CREATE TRIGGER knowledge_valid_from_default BEFORE INSERT ON knowledge
  FOR EACH ROW WHEN (NEW.valid_from IS NULL) EXECUTE FUNCTION knowledge_valid_from_default();

ALTER TABLE knowledge DROP CONSTRAINT IF EXISTS knowledge_superseded_closed_check;
ALTER TABLE knowledge ADD CONSTRAINT knowledge_superseded_closed_check CHECK (superseded_by IS NULL OR valid_to IS NOT NULL);
ALTER TABLE knowledge DROP CONSTRAINT IF EXISTS knowledge_supersede_self_check;
ALTER TABLE knowledge ADD CONSTRAINT knowledge_supersede_self_check CHECK (superseded_by IS DISTINCT FROM id AND supersedes IS DISTINCT FROM id);

-- The entries a supersession names (the chain, `explain`), and the few that expire.
CREATE INDEX IF NOT EXISTS knowledge_superseded_by_idx ON knowledge (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS knowledge_supersedes_idx ON knowledge (supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX IF NOT EXISTS knowledge_expires_at_idx ON knowledge (expires_at) WHERE expires_at IS NOT NULL;
