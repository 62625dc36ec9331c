-- Dialogue neighbours (src/store/knowledge/neighbours.ts): an active entry's previous and next
-- entries in its trace (source.trace_id), in creation order (created_at, id).
CREATE INDEX IF NOT EXISTS knowledge_trace_idx ON knowledge ((source->>'trace_id'), created_at, id) WHERE status = 'active';
