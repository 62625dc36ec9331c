-- The change log (0006) is read only by an embedded store's in-memory full-text index.
-- A session that searches in SQL — every PostgreSQL server connection, and the embedded
-- database opened with `fulltext: sql` — sets `knowhub.change_log = off`, and its writes
-- skip the log (about 15% of a save or a feedback on a server). Unset means on.

CREATE OR REPLACE FUNCTION knowledge_change_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('knowhub.change_log', true) = 'off' THEN
    RETURN NULL;
  END IF;
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
  IF current_setting('knowhub.change_log', true) = 'off' THEN
    RETURN NULL;
  END IF;
  INSERT INTO knowledge_change (id) VALUES (NULL);
  RETURN NULL;
END
$$;
