-- BM25 statistics per scope (issue 15.1): a caller's full-text scores must not depend on
-- entries it cannot see. The global statistics of 0004 (one document frequency per term,
-- one collection size) let another tenant's private writes move everyone's scores; these
-- tables keep them per scope, and a search sums them over the caller's visible scopes
-- (src/store/knowledge/search-text.ts). An entry in several visible scopes counts once per
-- scope (the in-memory index counts the same way, see src/store/text-index.ts), so every
-- figure is a function of the visible entries alone. Every status counts (as in 0004).
-- Triggers keep the tables in step on every insert, update, delete and truncate, whatever
-- path writes.

CREATE TABLE IF NOT EXISTS knowledge_scope_stats (
  scope     text PRIMARY KEY,
  docs      bigint NOT NULL DEFAULT 0,
  total_len bigint NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS knowledge_scope_term (
  term  text NOT NULL,
  scope text NOT NULL,
  df    integer NOT NULL,
  PRIMARY KEY (term, scope)
);

INSERT INTO knowledge_scope_stats (scope, docs, total_len)
  SELECT s.scope, count(*), coalesce(sum(k.search_len), 0)
  FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s
  GROUP BY s.scope
  ON CONFLICT (scope) DO NOTHING;
INSERT INTO knowledge_scope_term (term, scope, df)
  SELECT lexeme, s.scope, count(*)
  FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s, unnest(tsvector_to_array(k.search_doc)) AS lexeme
  GROUP BY lexeme, s.scope
  ON CONFLICT (term, scope) DO NOTHING;

-- The scope rows are locked first, in sorted order, then the (term, scope) rows in sorted
-- order: concurrent writers to one scope queue on its row instead of deadlocking.
CREATE OR REPLACE FUNCTION knowledge_scope_search_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  new_doc tsvector := CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.search_doc END;
  old_doc tsvector := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.search_doc END;
  new_len integer := CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE NEW.search_len END;
  old_len integer := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.search_len END;
  new_scopes text[] := CASE WHEN TG_OP = 'DELETE' THEN '{}'::text[] ELSE ARRAY(SELECT DISTINCT unnest(NEW.scopes)) END;
  old_scopes text[] := CASE WHEN TG_OP = 'INSERT' THEN '{}'::text[] ELSE ARRAY(SELECT DISTINCT unnest(OLD.scopes)) END;
BEGIN
  INSERT INTO knowledge_scope_stats AS st (scope, docs, total_len)
    SELECT d.scope, sum(d.docs), sum(d.len) FROM (
      SELECT s AS scope, 1 AS docs, new_len AS len FROM unnest(new_scopes) AS s
      UNION ALL
      SELECT s, -1, -old_len FROM unnest(old_scopes) AS s
    ) d
    GROUP BY d.scope HAVING sum(d.docs) <> 0 OR sum(d.len) <> 0 ORDER BY d.scope
    ON CONFLICT (scope) DO UPDATE SET docs = st.docs + EXCLUDED.docs, total_len = st.total_len + EXCLUDED.total_len;
  INSERT INTO knowledge_scope_term AS t (term, scope, df)
    SELECT d.term, d.scope, sum(d.delta) FROM (
      SELECT lexeme AS term, s AS scope, 1 AS delta FROM unnest(tsvector_to_array(new_doc)) AS lexeme, unnest(new_scopes) AS s
      UNION ALL
      SELECT lexeme, s, -1 FROM unnest(tsvector_to_array(old_doc)) AS lexeme, unnest(old_scopes) AS s
    ) d
    GROUP BY d.term, d.scope HAVING sum(d.delta) <> 0 ORDER BY d.term, d.scope
    ON CONFLICT (term, scope) DO UPDATE SET df = t.df + EXCLUDED.df;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_scope_search_stats_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM knowledge_scope_term;
  DELETE FROM knowledge_scope_stats;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS knowledge_search_stats_insert ON knowledge;
DROP TRIGGER IF EXISTS knowledge_search_stats_update ON knowledge;
DROP TRIGGER IF EXISTS knowledge_search_stats_delete ON knowledge;
DROP TRIGGER IF EXISTS knowledge_search_stats_truncate ON knowledge;
DROP FUNCTION IF EXISTS knowledge_search_stats();
DROP FUNCTION IF EXISTS knowledge_search_stats_reset();
DROP TABLE IF EXISTS knowledge_term;
DROP TABLE IF EXISTS knowledge_text_stats;

CREATE TRIGGER knowledge_scope_search_stats_insert AFTER INSERT ON knowledge
  FOR EACH ROW EXECUTE FUNCTION knowledge_scope_search_stats();
CREATE TRIGGER knowledge_scope_search_stats_update AFTER UPDATE OF search_doc, search_len, scopes ON knowledge
  FOR EACH ROW WHEN (OLD.search_doc IS DISTINCT FROM NEW.search_doc OR OLD.search_len IS DISTINCT FROM NEW.search_len OR OLD.scopes IS DISTINCT FROM NEW.scopes)
  EXECUTE FUNCTION knowledge_scope_search_stats();
CREATE TRIGGER knowledge_scope_search_stats_delete AFTER DELETE ON knowledge
  FOR EACH ROW EXECUTE FUNCTION knowledge_scope_search_stats();
CREATE TRIGGER knowledge_scope_search_stats_truncate AFTER TRUNCATE ON knowledge
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_scope_search_stats_reset();
