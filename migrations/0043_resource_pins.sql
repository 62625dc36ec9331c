-- Issue 15 item 8: an entry's resource_ids resolve to the resources its owner meant, not to
-- a same-id resource another principal planted later. `resource_owners` maps each
-- referenced id to the owner of the resource it resolved to when the entry was saved or
-- edited (src/knowledge/resource-pins.ts); an id with no pin resolves in the entry
-- owner's own namespace only.
--
-- Entries saved before: each id is pinned to the entry owner's own resource with that id
-- when there is one, else to the oldest resource with that id that existed when the entry
-- was saved; else it stays unpinned.

ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS resource_owners jsonb NOT NULL DEFAULT '{}';

UPDATE knowledge k SET resource_owners = COALESCE((
    SELECT jsonb_object_agg(ref.id, pin.owner)
    FROM unnest(k.resource_ids) AS ref(id)
    CROSS JOIN LATERAL (
      SELECT r.owner FROM resources r
      WHERE r.id = ref.id AND (r.owner = k.owner OR r.created_at <= k.created_at)
      ORDER BY (r.owner = k.owner) DESC, r.created_at, r.owner
      LIMIT 1
    ) pin
  ), '{}'::jsonb)
WHERE cardinality(k.resource_ids) > 0;
