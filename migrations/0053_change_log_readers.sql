-- Issue 32: the in-memory full-text index on a PostgreSQL server (`search.fulltext: memory`).
-- Until now only the embedded database's index read the change log (0006), and every server
-- session skipped it (`knowhub.change_log = off`, 0008). A server process that keeps an index
-- registers here while it runs; while any is registered, every session logs its changes,
-- whatever its own setting (a one-shot CLI import, a process that searches in SQL), so that the
-- readers miss nothing. With no reader the log stays off on a server, as before.
--
-- Several processes read the log, so none may delete what the others have not read: the
-- readers prune rows far behind the log's top (src/store/text-index/sync.ts) and record the
-- highest pruned sequence number here; a reader that had not read that far rebuilds its index.

CREATE TABLE IF NOT EXISTS knowledge_change_reader (
  name  text PRIMARY KEY,
  since timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS knowledge_change_pruned (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  seq bigint NOT NULL DEFAULT 0
);
INSERT INTO knowledge_change_pruned (one, seq) VALUES (true, 0) ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION knowledge_change_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('knowhub.change_log', true) = 'off' AND NOT EXISTS (SELECT 1 FROM knowledge_change_reader) THEN
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
  IF current_setting('knowhub.change_log', true) = 'off' AND NOT EXISTS (SELECT 1 FROM knowledge_change_reader) THEN
    RETURN NULL;
  END IF;
  INSERT INTO knowledge_change (id) VALUES (NULL);
  PERFORM pg_notify('knowhub_knowledge_change', '');
  RETURN NULL;
END
$$;
