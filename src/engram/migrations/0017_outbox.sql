-- Actions and the transactional outbox (SPEC 7): an action is written in the same transaction as the
-- memory that implies it, under a unique idempotency key per tenant; workers lease due actions across
-- tenants (SKIP LOCKED), dispatch them with the key, retry with backoff and dead-letter what keeps failing.
CREATE TABLE outbox_actions (
    tenant_id         engram_tenant NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
    id                uuid NOT NULL,
    idempotency_key   text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 256),
    request_hash      text NOT NULL CHECK (char_length(request_hash) = 64),  -- tells a replay from a reuse
    handler           text NOT NULL CHECK (handler ~ '^[a-z][a-z0-9_.-]{0,63}$'),
    target            text CHECK (char_length(target) BETWEEN 1 AND 2048),
    payload           jsonb NOT NULL CHECK (octet_length(payload::text) <= 65536),
    memory_id         uuid,
    user_id           text CHECK (char_length(user_id) BETWEEN 1 AND 256),
    agent_id          text CHECK (char_length(agent_id) BETWEEN 1 AND 256),
    workflow_id       text CHECK (char_length(workflow_id) BETWEEN 1 AND 256),
    status            text NOT NULL CHECK (status IN ('pending', 'done', 'dead')),
    attempts          integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts      integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
    next_attempt_at   timestamptz NOT NULL,
    leased_until      timestamptz,
    leased_by         text CHECK (char_length(leased_by) <= 200),
    last_error        text CHECK (char_length(last_error) <= 2000),
    result            jsonb CHECK (octet_length(result::text) <= 16384),
    outcome_memory_id uuid,
    created_at        timestamptz NOT NULL,
    finished_at       timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, idempotency_key)
);
ALTER TABLE outbox_actions ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox_actions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON outbox_actions
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
-- Leasing spans tenants, in transactions that set engram.job_queue (as the embedding queue): the lease
-- statement reads ids and times only; payloads are read under each tenant's policy.
CREATE POLICY job_queue ON outbox_actions
    USING (current_setting('engram.job_queue', true) = 'lease');
-- DELETE: forgetting a subject removes their actions (SPEC 6.5).
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_actions TO engram_app;
CREATE INDEX outbox_actions_due ON outbox_actions (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_actions_status ON outbox_actions (tenant_id, status, created_at);

-- Workers sleep on LISTEN and wake when an action is written (the notice carries nothing).
CREATE FUNCTION engram_outbox_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('engram_outbox', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_actions_notify AFTER INSERT ON outbox_actions
    FOR EACH STATEMENT EXECUTE FUNCTION engram_outbox_notify();
