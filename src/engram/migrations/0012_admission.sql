-- Admission (SPEC 4.5): each memory keeps the decision that let it in and its reasons, so reads, history
-- snapshots and the approval queue can say why. A constant default: no table rewrite.
ALTER TABLE memories ADD COLUMN admission jsonb NOT NULL DEFAULT '{}'
    CHECK (jsonb_typeof(admission) = 'object' AND pg_column_size(admission) <= 65536);

-- The approval queue: what waits for a reviewer, oldest first, without scanning the tenant.
CREATE INDEX memories_awaiting_review ON memories (tenant_id, recorded_at, id)
    WHERE status IN ('pending_approval', 'quarantined');
