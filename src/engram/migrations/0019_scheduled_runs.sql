-- Periodic background jobs per tenant (decay, consolidation): when each runs next and who holds it now. A
-- scheduler leases a due row with SKIP LOCKED, so several `engram worker` processes (and `engram serve`)
-- never run one tenant's job twice at once; the last run's outcome stays for the operator.
CREATE TABLE scheduled_runs (
    tenant_id        engram_tenant NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
    job              text NOT NULL CHECK (job ~ '^[a-z][a-z0-9_]{0,63}$'),
    next_run_at      timestamptz NOT NULL,
    leased_until     timestamptz,
    leased_by        text CHECK (char_length(leased_by) <= 200),
    runs             integer NOT NULL DEFAULT 0 CHECK (runs >= 0),
    last_started_at  timestamptz,
    last_finished_at timestamptz,
    last_result      jsonb CHECK (octet_length(last_result::text) <= 16384),
    last_error       text CHECK (char_length(last_error) <= 2000),
    PRIMARY KEY (tenant_id, job)
);
CREATE INDEX scheduled_runs_due ON scheduled_runs (next_run_at);
ALTER TABLE scheduled_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE scheduled_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON scheduled_runs
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
-- Scheduling spans tenants, in transactions that set engram.job_queue (as the outbox and embedding queues).
CREATE POLICY job_queue ON scheduled_runs
    USING (current_setting('engram.job_queue', true) = 'lease')
    WITH CHECK (current_setting('engram.job_queue', true) = 'lease');
-- ...and needs to know which tenants there are (their ids only are read).
CREATE POLICY job_queue_tenants ON tenants FOR SELECT
    USING (current_setting('engram.job_queue', true) = 'lease');
GRANT SELECT, INSERT, UPDATE, DELETE ON scheduled_runs TO engram_app;
-- The tenants table is the list of tenants the scheduler walks: the write path registers a tenant on its
-- first write; these are the tenants that wrote before it did.
INSERT INTO tenants (tenant_id) SELECT DISTINCT tenant_id FROM memories ON CONFLICT (tenant_id) DO NOTHING;
