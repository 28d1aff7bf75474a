-- Engram foundation: memories, their history, embeddings per model, relations, audit, API keys, jobs.
-- Every tenant table carries tenant_id in each primary, unique and foreign key (Citus-ready, SPEC 10)
-- and has row-level security keyed on the per-transaction setting engram.tenant_id.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The role the service runs queries as (SET ROLE). It owns nothing, so RLS always applies to it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'engram_app') THEN
        CREATE ROLE engram_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
    IF NOT EXISTS (
        SELECT 1 FROM pg_roles r WHERE r.rolname = current_user AND r.rolsuper
    ) AND NOT pg_has_role(current_user, 'engram_app', 'MEMBER') THEN
        EXECUTE format('GRANT engram_app TO %I', current_user);
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO engram_app;

CREATE DOMAIN engram_tenant AS text
    CHECK (VALUE ~ '^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$');

CREATE TABLE tenants (
    tenant_id   engram_tenant PRIMARY KEY,
    fts_config  regconfig NOT NULL DEFAULT 'english',
    settings    jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memories (
    tenant_id     engram_tenant NOT NULL,
    id            uuid NOT NULL,
    user_id       text CHECK (char_length(user_id) BETWEEN 1 AND 256),
    agent_id      text CHECK (char_length(agent_id) BETWEEN 1 AND 256),
    workflow_id   text CHECK (char_length(workflow_id) BETWEEN 1 AND 256),
    session_id    text CHECK (char_length(session_id) BETWEEN 1 AND 256),
    external_id   text CHECK (char_length(external_id) BETWEEN 1 AND 256),
    kind          text NOT NULL CHECK (kind IN ('working', 'episodic', 'semantic', 'procedural')),
    subtype       text CHECK (subtype ~ '^[a-z][a-z0-9_]{0,63}$'),
    visibility    text NOT NULL DEFAULT 'user' CHECK (visibility IN ('user', 'workflow', 'tenant', 'system')),
    content       text NOT NULL CHECK (char_length(content) BETWEEN 1 AND 12000),
    summary       text CHECK (char_length(summary) BETWEEN 1 AND 2000),
    content_hash  text NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    fact_key      text CHECK (char_length(fact_key) BETWEEN 1 AND 200),
    source_type   text NOT NULL DEFAULT 'user_message' CHECK (source_type IN (
                      'user_message', 'tool_result', 'document', 'human_note', 'system_event', 'agent_inference')),
    source_ref    text CHECK (char_length(source_ref) BETWEEN 1 AND 2048),
    confidence    real NOT NULL DEFAULT 0.8 CHECK (confidence BETWEEN 0 AND 1),
    importance    real NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    status        text NOT NULL DEFAULT 'active' CHECK (status IN (
                      'active', 'pending_approval', 'quarantined', 'superseded', 'archived', 'rejected')),
    revision      integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    valid_from    timestamptz NOT NULL DEFAULT now(),
    valid_until   timestamptz,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    superseded_by uuid,
    contains_pii  boolean NOT NULL DEFAULT false,
    allow_in_prompt boolean NOT NULL DEFAULT true,
    require_citation boolean NOT NULL DEFAULT false,
    require_freshness_check boolean NOT NULL DEFAULT false,
    retention_reason text CHECK (char_length(retention_reason) BETWEEN 1 AND 500),
    tags          text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 64),
    metadata      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    last_used_at  timestamptz,
    use_count     integer NOT NULL DEFAULT 0 CHECK (use_count >= 0),
    fts_config    regconfig NOT NULL DEFAULT 'english',
    -- Scope of a fact: one active memory per (tenant, scope_key, fact_key). Sessions are not part of it:
    -- a preference learnt in one session is the same fact in the next.
    scope_key     text GENERATED ALWAYS AS (
                      coalesce(user_id, '') || chr(31) || coalesce(agent_id, '') || chr(31) || coalesce(workflow_id, '')
                  ) STORED,
    agent_key     text GENERATED ALWAYS AS (coalesce(agent_id, '')) STORED,
    fts           tsvector GENERATED ALWAYS AS (
                      to_tsvector(fts_config, coalesce(summary, '') || ' ' || content)
                  ) STORED,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT memories_valid_window CHECK (valid_until IS NULL OR valid_until > valid_from),
    CONSTRAINT memories_superseded_has_successor CHECK (status <> 'superseded' OR superseded_by IS NOT NULL)
);

-- Serving path: active memories of a tenant.
CREATE INDEX memories_active_idx ON memories (tenant_id, kind, recorded_at DESC) WHERE status = 'active';
-- At most one active memory per fact in a scope; the lock in the write path keeps this from ever firing.
CREATE UNIQUE INDEX memories_active_fact_key ON memories (tenant_id, scope_key, fact_key)
    WHERE status = 'active' AND fact_key IS NOT NULL;
-- Idempotent writes: external_id is unique per tenant and agent.
CREATE UNIQUE INDEX memories_external_id ON memories (tenant_id, agent_key, external_id)
    WHERE external_id IS NOT NULL;
CREATE INDEX memories_content_hash ON memories (tenant_id, content_hash);
CREATE INDEX memories_user ON memories (tenant_id, user_id, id DESC);
CREATE INDEX memories_fts ON memories USING gin (fts);
CREATE INDEX memories_trgm ON memories USING gin (content gin_trgm_ops);
CREATE INDEX memories_tags ON memories USING gin (tags);
CREATE INDEX memories_metadata ON memories USING gin (metadata jsonb_path_ops);

-- Every state a memory has been in: the full record after each change.
CREATE TABLE memory_revisions (
    tenant_id   engram_tenant NOT NULL,
    memory_id   uuid NOT NULL,
    revision    integer NOT NULL CHECK (revision >= 1),
    change      text NOT NULL CHECK (change IN ('created', 'updated', 'superseded', 'archived', 'restored')),
    actor       text NOT NULL,
    changed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    snapshot    jsonb NOT NULL,
    PRIMARY KEY (tenant_id, memory_id, revision),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE
);

-- Embedding models in use. A catalogue, not tenant data (a Citus reference table).
CREATE TABLE embedding_models (
    model_id    text PRIMARY KEY CHECK (char_length(model_id) BETWEEN 1 AND 200),
    dimensions  integer NOT NULL CHECK (dimensions BETWEEN 1 AND 16000),
    index_name  text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Vectors per memory and model; a model migration builds beside the old vectors.
-- One HNSW index per model (partial, on a typed expression) is created when the model is registered.
CREATE TABLE memory_embeddings (
    tenant_id    engram_tenant NOT NULL,
    memory_id    uuid NOT NULL,
    model_id     text NOT NULL REFERENCES embedding_models (model_id),
    content_hash text NOT NULL,
    embedding    vector NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, memory_id, model_id),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX memory_embeddings_hash ON memory_embeddings (tenant_id, model_id, content_hash);

-- Memories still waiting for a vector (embedder down, slow, or the write asked to defer).
CREATE TABLE embedding_jobs (
    tenant_id   engram_tenant NOT NULL,
    memory_id   uuid NOT NULL,
    model_id    text NOT NULL REFERENCES embedding_models (model_id),
    attempts    integer NOT NULL DEFAULT 0,
    not_before  timestamptz NOT NULL DEFAULT now(),
    last_error  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, memory_id, model_id),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX embedding_jobs_due ON embedding_jobs (model_id, not_before);

CREATE TABLE relations (
    tenant_id   engram_tenant NOT NULL,
    id          uuid NOT NULL,
    src_id      uuid NOT NULL,
    dst_id      uuid NOT NULL,
    type        text NOT NULL CHECK (type ~ '^[a-z][a-z0-9_]{0,63}$'),
    weight      real NOT NULL DEFAULT 1.0 CHECK (weight BETWEEN 0 AND 1),
    metadata    jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, src_id, dst_id, type),
    CHECK (src_id <> dst_id),
    FOREIGN KEY (tenant_id, src_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, dst_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX relations_dst ON relations (tenant_id, dst_id);

-- Audit trail. No foreign key: a deletion leaves its tombstone here, without the content.
CREATE TABLE audit_events (
    tenant_id   engram_tenant NOT NULL,
    id          uuid NOT NULL,
    at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor       text NOT NULL,
    action      text NOT NULL,
    memory_id   uuid,
    details     jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_events_memory ON audit_events (tenant_id, memory_id, at);

-- API keys: only a sha256 of the secret is kept. The tenant comes from here, never from a request.
CREATE TABLE api_keys (
    tenant_id    engram_tenant NOT NULL REFERENCES tenants (tenant_id),
    id           uuid NOT NULL,
    name         text NOT NULL DEFAULT '' CHECK (char_length(name) <= 200),
    role         text NOT NULL CHECK (role IN ('agent', 'reviewer', 'admin')),
    prefix       text NOT NULL,
    key_hash     text NOT NULL CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, key_hash)
);
CREATE INDEX api_keys_hash ON api_keys (key_hash);

-- Row-level security: a row is visible only inside a transaction that set engram.tenant_id to its tenant.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['tenants', 'memories', 'memory_revisions', 'memory_embeddings', 'embedding_jobs',
                             'relations', 'audit_events', 'api_keys']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = current_setting(''engram.tenant_id'', true)) '
            'WITH CHECK (tenant_id = current_setting(''engram.tenant_id'', true))', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO engram_app', t);
    END LOOP;
END
$$;
GRANT SELECT ON embedding_models TO engram_app;

-- The only cross-tenant reads the service makes, as narrow functions owned by the schema owner.

-- Authenticate an API key by the sha256 of its secret.
CREATE FUNCTION engram_authenticate(p_key_hash text)
RETURNS TABLE (tenant_id text, key_id uuid, role text)
LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    UPDATE api_keys k SET last_used_at = now()
     WHERE k.key_hash = p_key_hash AND k.revoked_at IS NULL
       AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute');
    SELECT k.tenant_id, k.id, k.role FROM api_keys k
     WHERE k.key_hash = p_key_hash AND k.revoked_at IS NULL;
$$;

-- Lease due embedding jobs of one model across tenants: returns ids only; content is read per tenant.
CREATE FUNCTION engram_claim_embedding_jobs(p_model_id text, p_limit integer, p_lease_seconds integer)
RETURNS TABLE (tenant_id text, memory_id uuid)
LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    UPDATE embedding_jobs j
       SET attempts = j.attempts + 1,
           not_before = now() + make_interval(secs => p_lease_seconds)
      FROM (SELECT d.tenant_id, d.memory_id FROM embedding_jobs d
             WHERE d.model_id = p_model_id AND d.not_before <= now()
             ORDER BY d.not_before
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED) due
     WHERE j.tenant_id = due.tenant_id AND j.memory_id = due.memory_id AND j.model_id = p_model_id
    RETURNING j.tenant_id, j.memory_id;
$$;

-- How many jobs wait, for health and metrics.
CREATE FUNCTION engram_embedding_backlog()
RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT count(*) FROM embedding_jobs;
$$;

REVOKE ALL ON FUNCTION engram_authenticate(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION engram_claim_embedding_jobs(text, integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION engram_embedding_backlog() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_authenticate(text) TO engram_app;
GRANT EXECUTE ON FUNCTION engram_claim_embedding_jobs(text, integer, integer) TO engram_app;
GRANT EXECUTE ON FUNCTION engram_embedding_backlog() TO engram_app;
