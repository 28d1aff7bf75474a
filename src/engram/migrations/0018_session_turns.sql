-- The conversation buffer in PostgreSQL (SPEC 6.2), for deployments without Redis: a session's recent turns,
-- in order, until enough of them are condensed into memories.
CREATE TABLE session_turns (
    tenant_id   engram_tenant NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
    session_id  text NOT NULL CHECK (char_length(session_id) BETWEEN 1 AND 256),
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    speaker     text NOT NULL CHECK (char_length(speaker) BETWEEN 1 AND 64),
    content     text NOT NULL CHECK (char_length(content) BETWEEN 1 AND 12000),
    user_id     text CHECK (char_length(user_id) BETWEEN 1 AND 256),
    agent_id    text CHECK (char_length(agent_id) BETWEEN 1 AND 256),
    at          timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq)
);
ALTER TABLE session_turns ENABLE ROW LEVEL SECURITY;
ALTER TABLE session_turns FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON session_turns
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
GRANT SELECT, INSERT, DELETE ON session_turns TO engram_app;
CREATE INDEX session_turns_user ON session_turns (tenant_id, user_id) WHERE user_id IS NOT NULL;
