-- Search speed (see docs/retrieval.md). GIN indexes buffer new entries in a "pending
-- list" that every search scans linearly until a VACUUM merges it; PGlite runs no
-- autovacuum, so the list grew to the 4 MB default and each full-text search read it
-- whole (~460 pages at 10k entries). Keep the pending lists small (128 kB: inserts are
-- still batched into the index) and merge what is pending now. The knowledge service
-- also merges them after bulk loads (KnowledgeStore.analyze).
ALTER INDEX knowledge_search_idx SET (gin_pending_list_limit = 128);
ALTER INDEX knowledge_scopes_idx SET (gin_pending_list_limit = 128);
ALTER INDEX knowledge_types_idx SET (gin_pending_list_limit = 128);
SELECT gin_clean_pending_list('knowledge_search_idx'::regclass);
SELECT gin_clean_pending_list('knowledge_scopes_idx'::regclass);
SELECT gin_clean_pending_list('knowledge_types_idx'::regclass);

-- Full-text scoring reads search_tf (and the match reads search_doc) on every candidate:
-- keep both inline and uncompressed. Rows up to ~4 kB stay whole on their page (the
-- embedding, stored EXTERNAL, still moves out of line first), instead of the toaster
-- compressing the search columns, or moving them out of line, at 2 kB. Applies to rows
-- written from now on; older rows keep their layout until they are rewritten.
ALTER TABLE knowledge SET (toast_tuple_target = 4080);
ALTER TABLE knowledge ALTER COLUMN search_doc SET STORAGE MAIN;
ALTER TABLE knowledge ALTER COLUMN search_tf SET STORAGE MAIN;
