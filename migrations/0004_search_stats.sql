-- BM25 for full-text search (src/store/knowledge.ts searchText): each entry's term
-- frequencies and length, each term's document frequency, and the number and total
-- length of the documents. Triggers keep the statistics in step with search_doc on
-- every insert, update, delete and truncate, whatever path writes.

-- search_tf: the entry's weighted term frequencies ({"term": tf}); search_len: its length in terms.
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS search_tf jsonb NOT NULL DEFAULT '{}';
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS search_len integer NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS knowledge_term (
  term text PRIMARY KEY,
  df   integer NOT NULL
);

CREATE TABLE IF NOT EXISTS knowledge_text_stats (
  id        boolean PRIMARY KEY DEFAULT true CHECK (id),
  docs      bigint NOT NULL DEFAULT 0,
  total_len bigint NOT NULL DEFAULT 0
);

-- Entries written before this migration: lengths and frequencies from their documents
-- (the knowledge service then rewrites their documents in the new format).
UPDATE knowledge SET search_len = (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(search_doc) u);
INSERT INTO knowledge_term (term, df)
  SELECT lexeme, count(*) FROM knowledge, unnest(tsvector_to_array(search_doc)) AS lexeme GROUP BY lexeme
  ON CONFLICT (term) DO NOTHING;
INSERT INTO knowledge_text_stats (id, docs, total_len)
  SELECT true, count(*), coalesce(sum(search_len), 0) FROM knowledge
  ON CONFLICT (id) DO NOTHING;

-- The stats row is locked first, then the terms in sorted order: concurrent writers
-- queue on the stats row instead of deadlocking on each other's terms.
CREATE OR REPLACE FUNCTION knowledge_search_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  new_doc tsvector := CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.search_doc END;
  old_doc tsvector := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.search_doc END;
  new_len integer := CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE NEW.search_len END;
  old_len integer := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.search_len END;
BEGIN
  UPDATE knowledge_text_stats
    SET docs = docs + (CASE WHEN TG_OP = 'INSERT' THEN 1 WHEN TG_OP = 'DELETE' THEN -1 ELSE 0 END),
        total_len = total_len + new_len - old_len
    WHERE id;
  INSERT INTO knowledge_term AS t (term, df)
    SELECT d.term, sum(d.delta) FROM (
      SELECT lexeme AS term, 1 AS delta FROM unnest(tsvector_to_array(new_doc)) AS lexeme
      UNION ALL
      SELECT lexeme, -1 FROM unnest(tsvector_to_array(old_doc)) AS lexeme
    ) d
    GROUP BY d.term HAVING sum(d.delta) <> 0 ORDER BY d.term
    ON CONFLICT (term) DO UPDATE SET df = t.df + EXCLUDED.df;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_search_stats_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM knowledge_term;
  UPDATE knowledge_text_stats SET docs = 0, total_len = 0 WHERE id;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS knowledge_search_stats_insert ON knowledge;
CREATE TRIGGER knowledge_search_stats_insert AFTER INSERT ON knowledge
  FOR EACH ROW EXECUTE FUNCTION knowledge_search_stats();
DROP TRIGGER IF EXISTS knowledge_search_stats_update ON knowledge;
CREATE TRIGGER knowledge_search_stats_update AFTER UPDATE OF search_doc, search_len ON knowledge
  FOR EACH ROW WHEN (OLD.search_doc IS DISTINCT FROM NEW.search_doc OR OLD.search_len IS DISTINCT FROM NEW.search_len)
  EXECUTE FUNCTION knowledge_search_stats();
DROP TRIGGER IF EXISTS knowledge_search_stats_delete ON knowledge;
CREATE TRIGGER knowledge_search_stats_delete AFTER DELETE ON knowledge
  FOR EACH ROW EXECUTE FUNCTION knowledge_search_stats();
DROP TRIGGER IF EXISTS knowledge_search_stats_truncate ON knowledge;
CREATE TRIGGER knowledge_search_stats_truncate AFTER TRUNCATE ON knowledge
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_search_stats_reset();
