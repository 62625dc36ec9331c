-- BM25 statistics of current knowledge (issue 31). A search returns current entries by default
-- (not superseded: `valid_to` NULL, migration 0048), but the per-scope statistics of 0009 still
-- counted the superseded ones: a replaced fact lowered the idf of every word it shares with the
-- fact that replaced it ("on-call lead of the platform team"), so the current fact, the only
-- one the search can return, looked weaker than an unrelated entry. The statistics now also
-- count the superseded entries apart (`superseded_docs`, `superseded_len`, `superseded_df`):
-- a search of current entries subtracts them, one of the history (`as_of`, `include`) reads
-- every entry as before. The in-memory index keeps the same figures (src/store/text-index).
-- Same lock order as 0009 and 0035 (scope rows first, sorted, then (term, scope) rows, sorted).

ALTER TABLE knowledge_scope_stats ADD COLUMN IF NOT EXISTS superseded_docs bigint NOT NULL DEFAULT 0;
ALTER TABLE knowledge_scope_stats ADD COLUMN IF NOT EXISTS superseded_len bigint NOT NULL DEFAULT 0;
ALTER TABLE knowledge_scope_term ADD COLUMN IF NOT EXISTS superseded_df integer NOT NULL DEFAULT 0;

-- The row trigger (updates; 0009): every figure as before, and the superseded ones by whether
-- the old and the new row are superseded.
CREATE OR REPLACE FUNCTION knowledge_scope_search_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  new_doc tsvector := CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.search_doc END;
  old_doc tsvector := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.search_doc END;
  new_len integer := CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE NEW.search_len END;
  old_len integer := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.search_len END;
  new_scopes text[] := CASE WHEN TG_OP = 'DELETE' THEN '{}'::text[] ELSE ARRAY(SELECT DISTINCT unnest(NEW.scopes)) END;
  old_scopes text[] := CASE WHEN TG_OP = 'INSERT' THEN '{}'::text[] ELSE ARRAY(SELECT DISTINCT unnest(OLD.scopes)) END;
  new_closed integer := CASE WHEN TG_OP <> 'DELETE' AND NEW.valid_to IS NOT NULL THEN 1 ELSE 0 END;
  old_closed integer := CASE WHEN TG_OP <> 'INSERT' AND OLD.valid_to IS NOT NULL THEN 1 ELSE 0 END;
BEGIN
  INSERT INTO knowledge_scope_stats AS st (scope, docs, total_len, superseded_docs, superseded_len)
    SELECT d.scope, sum(d.docs), sum(d.len), sum(d.closed_docs), sum(d.closed_len) FROM (
      SELECT s AS scope, 1 AS docs, new_len AS len, new_closed AS closed_docs, new_closed * new_len AS closed_len FROM unnest(new_scopes) AS s
      UNION ALL
      SELECT s, -1, -old_len, -old_closed, -old_closed * old_len FROM unnest(old_scopes) AS s
    ) d
    GROUP BY d.scope HAVING sum(d.docs) <> 0 OR sum(d.len) <> 0 OR sum(d.closed_docs) <> 0 OR sum(d.closed_len) <> 0 ORDER BY d.scope
    ON CONFLICT (scope) DO UPDATE SET docs = st.docs + EXCLUDED.docs, total_len = st.total_len + EXCLUDED.total_len,
      superseded_docs = st.superseded_docs + EXCLUDED.superseded_docs, superseded_len = st.superseded_len + EXCLUDED.superseded_len;
  INSERT INTO knowledge_scope_term AS t (term, scope, df, superseded_df)
    SELECT d.term, d.scope, sum(d.delta), sum(d.closed) FROM (
      SELECT lexeme AS term, s AS scope, 1 AS delta, new_closed AS closed FROM unnest(tsvector_to_array(new_doc)) AS lexeme, unnest(new_scopes) AS s
      UNION ALL
      SELECT lexeme, s, -1, -old_closed FROM unnest(tsvector_to_array(old_doc)) AS lexeme, unnest(old_scopes) AS s
    ) d
    GROUP BY d.term, d.scope HAVING sum(d.delta) <> 0 OR sum(d.closed) <> 0 ORDER BY d.term, d.scope
    ON CONFLICT (term, scope) DO UPDATE SET df = t.df + EXCLUDED.df, superseded_df = t.superseded_df + EXCLUDED.superseded_df;
  RETURN NULL;
END
$$;

-- It now also fires when an entry becomes superseded or current again.
DROP TRIGGER IF EXISTS knowledge_scope_search_stats_update ON knowledge;
CREATE TRIGGER knowledge_scope_search_stats_update AFTER UPDATE OF search_doc, search_len, scopes, valid_to ON knowledge
  FOR EACH ROW WHEN (OLD.search_doc IS DISTINCT FROM NEW.search_doc OR OLD.search_len IS DISTINCT FROM NEW.search_len
    OR OLD.scopes IS DISTINCT FROM NEW.scopes OR (OLD.valid_to IS NULL) <> (NEW.valid_to IS NULL))
  EXECUTE FUNCTION knowledge_scope_search_stats();

-- The statement triggers (inserts and deletes; 0035).
CREATE OR REPLACE FUNCTION knowledge_scope_search_stats_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sign integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
  INSERT INTO knowledge_scope_stats AS st (scope, docs, total_len, superseded_docs, superseded_len)
    SELECT s.scope, sign * count(*), sign * coalesce(sum(r.search_len), 0),
      sign * count(*) FILTER (WHERE r.valid_to IS NOT NULL), sign * coalesce(sum(r.search_len) FILTER (WHERE r.valid_to IS NOT NULL), 0)
    FROM changed_rows r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s
    GROUP BY s.scope ORDER BY s.scope
    ON CONFLICT (scope) DO UPDATE SET docs = st.docs + EXCLUDED.docs, total_len = st.total_len + EXCLUDED.total_len,
      superseded_docs = st.superseded_docs + EXCLUDED.superseded_docs, superseded_len = st.superseded_len + EXCLUDED.superseded_len;
  INSERT INTO knowledge_scope_term AS t (term, scope, df, superseded_df)
    SELECT lexeme, s.scope, sign * count(*), sign * count(*) FILTER (WHERE r.valid_to IS NOT NULL)
    FROM changed_rows r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s, unnest(tsvector_to_array(r.search_doc)) AS lexeme
    GROUP BY lexeme, s.scope ORDER BY lexeme, s.scope
    ON CONFLICT (term, scope) DO UPDATE SET df = t.df + EXCLUDED.df, superseded_df = t.superseded_df + EXCLUDED.superseded_df;
  RETURN NULL;
END
$$;

-- The embedded bulk import's one addition of its rows (0022).
CREATE OR REPLACE FUNCTION knowledge_scope_search_stats_add(ids text[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO knowledge_scope_stats AS st (scope, docs, total_len, superseded_docs, superseded_len)
    SELECT s.scope, count(*), coalesce(sum(r.search_len), 0),
      count(*) FILTER (WHERE r.valid_to IS NOT NULL), coalesce(sum(r.search_len) FILTER (WHERE r.valid_to IS NOT NULL), 0)
    FROM knowledge r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s
    WHERE r.id = ANY(ids)
    GROUP BY s.scope ORDER BY s.scope
    ON CONFLICT (scope) DO UPDATE SET docs = st.docs + EXCLUDED.docs, total_len = st.total_len + EXCLUDED.total_len,
      superseded_docs = st.superseded_docs + EXCLUDED.superseded_docs, superseded_len = st.superseded_len + EXCLUDED.superseded_len;
  INSERT INTO knowledge_scope_term AS t (term, scope, df, superseded_df)
    SELECT lexeme, s.scope, count(*), count(*) FILTER (WHERE r.valid_to IS NOT NULL)
    FROM knowledge r, LATERAL (SELECT DISTINCT unnest(r.scopes) AS scope) s, unnest(tsvector_to_array(r.search_doc)) AS lexeme
    WHERE r.id = ANY(ids)
    GROUP BY lexeme, s.scope ORDER BY lexeme, s.scope
    ON CONFLICT (term, scope) DO UPDATE SET df = t.df + EXCLUDED.df, superseded_df = t.superseded_df + EXCLUDED.superseded_df;
$$;

-- The entries superseded before this migration.
UPDATE knowledge_scope_stats st SET superseded_docs = c.docs, superseded_len = c.len
  FROM (SELECT s.scope, count(*) AS docs, coalesce(sum(k.search_len), 0) AS len
    FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s WHERE k.valid_to IS NOT NULL GROUP BY s.scope) c
  WHERE st.scope = c.scope;
UPDATE knowledge_scope_term t SET superseded_df = c.df
  FROM (SELECT lexeme AS term, s.scope, count(*) AS df
    FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s, unnest(tsvector_to_array(k.search_doc)) AS lexeme
    WHERE k.valid_to IS NOT NULL GROUP BY lexeme, s.scope) c
  WHERE t.term = c.term AND t.scope = c.scope;
