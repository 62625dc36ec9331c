-- Resource ids are namespaced by owner: two owners may each have
-- `credentials/website_a`. The key becomes (owner, id); existing rows keep their
-- values (ids were unique, so every (owner, id) pair is unique too). A lookup by id
-- alone resolves among the resources the caller can see (src/store/resources.ts).

ALTER TABLE resources DROP CONSTRAINT IF EXISTS resources_pkey;
ALTER TABLE resources ADD CONSTRAINT resources_pkey PRIMARY KEY (owner, id);
-- Lookups by id alone (GET /api/resource/{id}, expanding resource_ids, lists ordered by id).
CREATE INDEX IF NOT EXISTS resources_id_idx ON resources (id, owner);
-- The primary key's leading column serves lookups by owner now.
DROP INDEX IF EXISTS resources_owner_idx;
