-- Working memory (SPEC 6.1): the state of a running workflow (goal, steps done, open questions, blockers,
-- cached tool results), kept outside the prompt so that a workflow resumes exactly after a restart, a crash
-- or a day. One row per workflow holds the current state and its revision (compare-and-set: a writer names
-- the revision it read); every revision is kept beside it.
CREATE TABLE workflow_states (
    tenant_id   engram_tenant NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
    workflow_id text NOT NULL CHECK (char_length(workflow_id) BETWEEN 1 AND 256),
    revision    integer NOT NULL CHECK (revision >= 1),
    status      text NOT NULL CHECK (status IN ('running', 'ended')),
    state       jsonb NOT NULL CHECK (jsonb_typeof(state) = 'object' AND octet_length(state::text) <= 1048576),
    user_id     text CHECK (char_length(user_id) BETWEEN 1 AND 256),
    agent_id    text CHECK (char_length(agent_id) BETWEEN 1 AND 256),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    ended_at    timestamptz,
    PRIMARY KEY (tenant_id, workflow_id),
    CHECK ((status = 'ended') = (ended_at IS NOT NULL))
);

CREATE TABLE workflow_state_revisions (
    tenant_id   engram_tenant NOT NULL,
    workflow_id text NOT NULL,
    revision    integer NOT NULL CHECK (revision >= 1),
    status      text NOT NULL CHECK (status IN ('running', 'ended')),
    state       jsonb NOT NULL,
    actor       text NOT NULL,
    written_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, workflow_id, revision),
    FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflow_states (tenant_id, workflow_id) ON DELETE CASCADE
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workflow_states', 'workflow_state_revisions']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = current_setting(''engram.tenant_id'', true))'
                       ' WITH CHECK (tenant_id = current_setting(''engram.tenant_id'', true))', t);
    END LOOP;
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON workflow_states TO engram_app;
GRANT SELECT, INSERT, DELETE ON workflow_state_revisions TO engram_app;

-- Ending a workflow expires its working memories: found by workflow and kind.
CREATE INDEX memories_workflow_working ON memories (tenant_id, workflow_id)
    WHERE kind = 'working' AND workflow_id IS NOT NULL;
