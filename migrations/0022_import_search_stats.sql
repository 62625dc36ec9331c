-- Bulk import on the embedded database (issue 18): the per-scope BM25 statistics of an
-- import are added once, from all of its rows, instead of once per INSERT statement by the
-- statement trigger of 0035 (which upserted ~3,000 (term, scope) rows for every 200 entries:
-- more than half of an import's database time). The import disables that trigger inside its
-- own transaction, inserts, then calls this function with the ids it inserted; a failure
-- rolls all of it back, the trigger included. Same figures, same lock order as 0035.
-- (A function of its own: 0035, which may run after this file on a new database, redefines
-- the trigger and its function.)

CREATE OR REPLACE FUNCTION knowledge_scope_search_stats_add(ids text[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO knowledge_scope_stats AS st (scope, docs, total_len)
    SELECT s.scope, count(*), coalesce(sum(r.search_len), 0)
    FROM knowledge r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s
    WHERE r.id = ANY(ids)
    GROUP BY s.scope ORDER BY s.scope
    ON CONFLICT (scope) DO UPDATE SET docs = st.docs + EXCLUDED.docs, total_len = st.total_len + EXCLUDED.total_len;
  INSERT INTO knowledge_scope_term AS t (term, scope, df)
    SELECT lexeme, s.scope, count(*)
    FROM knowledge r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s, unnest(tsvector_to_array(r.search_doc)) AS lexeme
    WHERE r.id = ANY(ids)
    GROUP BY lexeme, s.scope ORDER BY lexeme, s.scope
    ON CONFLICT (term, scope) DO UPDATE SET df = t.df + EXCLUDED.df;
$$;
