-- Admission (SPEC 4.5): each memory keeps the decision that let it in and its reasons, so reads, history
-- snapshots and the approval queue can say why. A constant default: no table rewrite.
ALTER TABLE memories ADD COLUMN admission jsonb NOT NULL DEFAULT '{}'
    CHECK (jsonb_typeof(admission) = 'object' AND pg_column_size(admission) <= 65536);

-- The approval queue: what waits for a reviewer, oldest first (ids are time-ordered), without scanning
-- the tenant.
CREATE INDEX memories_awaiting_review ON memories (tenant_id, id)
    WHERE status IN ('pending_approval', 'quarantined');

-- A reviewer's decision is a revision of its own.
ALTER TABLE memory_revisions DROP CONSTRAINT memory_revisions_change_check;
ALTER TABLE memory_revisions ADD CONSTRAINT memory_revisions_change_check
    CHECK (change IN ('created', 'updated', 'superseded', 'archived', 'restored', 'approved', 'rejected', 'merged'))
    NOT VALID;  -- checked below without blocking writes to the table
ALTER TABLE memory_revisions VALIDATE CONSTRAINT memory_revisions_change_check;

-- Deduplication: a memory that merged repeats of itself keeps their sources (type, ref, external_id, when;
-- the first 100),
-- and its scope's recent memories are where near duplicates are looked for.
ALTER TABLE memories ADD COLUMN sources jsonb NOT NULL DEFAULT '[]'
    CHECK (jsonb_typeof(sources) = 'array' AND jsonb_array_length(sources) <= 100);
CREATE INDEX memories_dedup_scope ON memories (tenant_id, scope_key, kind, visibility, id DESC)
    WHERE status = 'active' AND fact_key IS NULL;
