-- Recall scopes (SPEC 5.1): who a memory belongs to, as an indexable value. A memory visible to one user
-- only is owned by 'u:<user>', one visible to one workflow only by 'w:<workflow>'; every other memory
-- (tenant, system, or a user/workflow memory without its user/workflow) is shared (NULL). What a caller
-- acting as user U in workflow W may see is always within the shared rows and those owned by 'u:U' or
-- 'w:W', so recall can read that scope through these indexes instead of walking the tenant: 1,000 users
-- in a 100,000-memory tenant each see about 100 rows. The visibility rule itself still decides every
-- candidate (``retrieval.filter``); the owner only narrows where recall looks.
--
-- The vectors carry the same owner (computed from their copy of the memory's visibility, migration 0010),
-- so the dense side can scan a scope's vectors without touching the memories of other users.
ALTER TABLE memories ADD COLUMN scope_owner text GENERATED ALWAYS AS (
    CASE WHEN visibility = 'user' AND user_id IS NOT NULL THEN 'u:' || user_id
         WHEN visibility = 'workflow' AND workflow_id IS NOT NULL THEN 'w:' || workflow_id END
) STORED;

ALTER TABLE memory_embeddings ADD COLUMN scope_owner text GENERATED ALWAYS AS (
    CASE WHEN visibility = 'user' AND user_id IS NOT NULL THEN 'u:' || user_id
         WHEN visibility = 'workflow' AND workflow_id IS NOT NULL THEN 'w:' || workflow_id END
) STORED;

-- Owned and shared rows in separate partial indexes: one index over both (NULLs included) was chosen by
-- the planner for lookups by (tenant_id, id) it should serve by the primary key.
CREATE INDEX memories_scope_owned ON memories (tenant_id, scope_owner, status) WHERE scope_owner IS NOT NULL;
CREATE INDEX memories_scope_shared ON memories (tenant_id, status) WHERE scope_owner IS NULL;
CREATE INDEX memory_embeddings_scope_owned ON memory_embeddings (tenant_id, model_id, scope_owner)
    WHERE scope_owner IS NOT NULL;
CREATE INDEX memory_embeddings_scope_shared ON memory_embeddings (tenant_id, model_id) WHERE scope_owner IS NULL;
