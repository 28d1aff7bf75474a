-- Trust boundaries (docs/security.md): row-level security forced on every tenant table, no function that
-- runs with the owner's rights, keys bound to a user or agent, receipts that name who asked, and CHECK
-- constraints behind the service's input rules.

-- Times outside years 1..9999 in UTC are stored by PostgreSQL but cannot be read back by the service: a
-- row holding one broke every read of its tenant. Rows written before this check are clamped into range.
UPDATE memories
   SET valid_from = least(greatest(valid_from, '0001-01-01 00:00:00+00'), '9999-12-31 23:59:59.999999+00'),
       valid_until = least(greatest(valid_until, '0001-01-01 00:00:00.000001+00'), '9999-12-31 23:59:59.999999+00'),
       expires_at = least(greatest(expires_at, '0001-01-01 00:00:00+00'), '9999-12-31 23:59:59.999999+00')
 WHERE valid_from NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    OR valid_until NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    OR expires_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';

-- Confidence and importance come back as they were sent (0.8, not 0.800000011920929): double precision,
-- existing values at real's six significant digits. One rewrite of the table, with the new checks.
ALTER TABLE memories
    ALTER COLUMN confidence TYPE double precision USING confidence::numeric::float8,
    ALTER COLUMN importance TYPE double precision USING importance::numeric::float8,
    ADD CONSTRAINT memories_times_in_range CHECK (
        valid_from BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (valid_until IS NULL OR valid_until BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
        AND (expires_at IS NULL OR expires_at BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')),
    ADD CONSTRAINT memories_metadata_size CHECK (octet_length(metadata::text) <= 32768);

ALTER TABLE relations
    ALTER COLUMN weight TYPE double precision USING weight::numeric::float8,
    ADD CONSTRAINT relations_metadata_size CHECK (octet_length(metadata::text) <= 32768);

ALTER TABLE tenants ADD CONSTRAINT tenants_settings_size CHECK (octet_length(settings::text) <= 65536);

-- Keys bound to a user and/or an agent act only as them.
ALTER TABLE api_keys
    ADD COLUMN user_id text CHECK (char_length(user_id) BETWEEN 1 AND 256),
    ADD COLUMN agent_id text CHECK (char_length(agent_id) BETWEEN 1 AND 256);

-- Who asked: the key, its role, and the user and agent the recall acted as (agents read only the receipts
-- of the user they act as).
ALTER TABLE recall_receipts
    ADD COLUMN key_id uuid,
    ADD COLUMN role text,
    ADD COLUMN acting_user_id text,
    ADD COLUMN acting_agent_id text;

-- Key lookup without owner rights: a transaction sees the key whose sha256 it names in engram.key_hash, and
-- no other (the tenant is not known before the key is).
DROP FUNCTION engram_authenticate(text);
CREATE POLICY key_lookup ON api_keys FOR SELECT
    USING (key_hash = current_setting('engram.key_hash', true));

-- The embedding queue is leased across tenants by the enrichment worker, in transactions that set
-- engram.job_queue; it holds ids and errors, never content (content is read under each tenant's RLS).
DROP FUNCTION engram_claim_embedding_jobs(text, integer, integer);
DROP FUNCTION engram_embedding_backlog();
CREATE POLICY job_queue ON embedding_jobs
    USING (current_setting('engram.job_queue', true) = 'lease');
CREATE INDEX embedding_jobs_tenant_due ON embedding_jobs (model_id, tenant_id, not_before);

-- Receipts and usage counts are written per tenant under its RLS (one pipelined transaction a batch).
DROP FUNCTION engram_touch_memories(text[], uuid[], integer[]);
DROP FUNCTION engram_insert_receipts(text[], uuid[], timestamptz[], text[], text[], jsonb[], jsonb[], jsonb[],
                                     integer[], real[], boolean[], boolean[]);
DROP FUNCTION engram_insert_receipt_batch(jsonb);

-- The owner is held to the policies too: a connection that logs in as the owner by mistake sees no tenant's
-- rows unless it names the tenant. (Superusers and BYPASSRLS roles are not; maintenance that spans tenants
-- needs one of those.)
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['tenants', 'memories', 'memory_revisions', 'memory_embeddings', 'embedding_jobs',
                             'relations', 'audit_events', 'api_keys', 'search_postings', 'recall_receipts']
    LOOP
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    END LOOP;
END
$$;

-- The service checks the schema version with its own login.
GRANT SELECT ON engram_migrations TO engram_app;

-- A deletion mends the chain of the memory it removes: its predecessors are found by this index.
CREATE INDEX memories_superseded_by ON memories (tenant_id, superseded_by) WHERE superseded_by IS NOT NULL;
