-- A change log of the knowledge table, for the embedded store's in-memory full-text
-- index (src/store/text-sync.ts). Triggers write one row per changed entry, whatever
-- path writes (the store, an import, a raw SQL statement); a TRUNCATE writes one row
-- with a NULL id, meaning "everything changed". The index reads the rows after the last
-- sequence number it has applied, re-reads those entries, and prunes what it has read.

CREATE TABLE IF NOT EXISTS knowledge_change (
  seq bigserial PRIMARY KEY,
  id  text
);

CREATE OR REPLACE FUNCTION knowledge_change_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO knowledge_change (id) VALUES (OLD.id);
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.id IS DISTINCT FROM OLD.id) THEN
    INSERT INTO knowledge_change (id) VALUES (NEW.id);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_change_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO knowledge_change (id) VALUES (NULL);
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS knowledge_change_row ON knowledge;
CREATE TRIGGER knowledge_change_row AFTER INSERT OR UPDATE OR DELETE ON knowledge
  FOR EACH ROW EXECUTE FUNCTION knowledge_change_row();
DROP TRIGGER IF EXISTS knowledge_change_truncate ON knowledge;
CREATE TRIGGER knowledge_change_truncate AFTER TRUNCATE ON knowledge
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_change_all();

-- Entries that exist already: the index reads them all on its first sync anyway.
INSERT INTO knowledge_change (id) VALUES (NULL);
