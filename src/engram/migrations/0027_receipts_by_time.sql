-- The receipts' retention deletes a tenant's oldest receipts, and the review page reads its last day's:
-- both by time, which no index served (a tenant's whole receipts were read).
CREATE INDEX recall_receipts_created ON recall_receipts (tenant_id, created_at);
