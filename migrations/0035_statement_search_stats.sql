-- Bulk writes (issue 18): the per-scope BM25 statistics of 0009 were kept by a trigger FOR
-- EACH ROW, so an import of n entries ran n statistics updates of ~60 (term, scope) rows
-- each. Inserts and deletes now update the statistics once per statement, from its
-- transition table: one upsert per distinct scope and per distinct (term, scope) of the
-- whole statement. Same figures, same lock order (scope rows first, sorted, then
-- (term, scope) rows, sorted), so concurrent writers still queue instead of deadlocking.
-- Updates keep the row trigger of 0009 (it fires only when search_doc, search_len or
-- scopes change, and a statement trigger cannot name columns); TRUNCATE keeps its reset.

-- `changed_rows`: the inserted rows (sign 1) or the deleted rows (sign -1).
CREATE OR REPLACE FUNCTION knowledge_scope_search_stats_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sign integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
  INSERT INTO knowledge_scope_stats AS st (scope, docs, total_len)
    SELECT s.scope, sign * count(*), sign * coalesce(sum(r.search_len), 0)
    FROM changed_rows r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s
    GROUP BY s.scope ORDER BY s.scope
    ON CONFLICT (scope) DO UPDATE SET docs = st.docs + EXCLUDED.docs, total_len = st.total_len + EXCLUDED.total_len;
  INSERT INTO knowledge_scope_term AS t (term, scope, df)
    SELECT lexeme, s.scope, sign * count(*)
    FROM changed_rows r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s, unnest(tsvector_to_array(r.search_doc)) AS lexeme
    GROUP BY lexeme, s.scope ORDER BY lexeme, s.scope
    ON CONFLICT (term, scope) DO UPDATE SET df = t.df + EXCLUDED.df;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS knowledge_scope_search_stats_insert ON knowledge;
DROP TRIGGER IF EXISTS knowledge_scope_search_stats_delete ON knowledge;
CREATE TRIGGER knowledge_scope_search_stats_insert AFTER INSERT ON knowledge
  REFERENCING NEW TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_scope_search_stats_statement();
CREATE TRIGGER knowledge_scope_search_stats_delete AFTER DELETE ON knowledge
  REFERENCING OLD TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_scope_search_stats_statement();
