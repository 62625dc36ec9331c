-- Issue 18: the change log (0006, 0008) also raises a notification on the channel
-- `knowhub_knowledge_change`, so that the embedded store's in-memory index knows, without a
-- query, whether anything changed since its last sync: a search on an unchanged table runs
-- no SQL at all (src/store/text-sync.ts). PostgreSQL delivers a transaction's notifications
-- at commit, once per distinct payload; sessions with the change log off raise none.

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
  PERFORM pg_notify('knowhub_knowledge_change', '');
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_change_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('knowhub.change_log', true) = 'off' THEN
    RETURN NULL;
  END IF;
  INSERT INTO knowledge_change (id) VALUES (NULL);
  PERFORM pg_notify('knowhub_knowledge_change', '');
  RETURN NULL;
END
$$;
