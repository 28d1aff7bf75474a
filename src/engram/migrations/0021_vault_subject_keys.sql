-- Per-subject vault keys (SPEC 6.5): a value written for a user is sealed under that user's data key (kept
-- outside the database, see engram/service/subject_keys.py), one copy per user who wrote it. The tenant-wide
-- row keeps the placeholder and the keyed hash; its own sealed copy exists only when a write without a user
-- held the value.
ALTER TABLE pii_vault ALTER COLUMN sealed DROP NOT NULL;
CREATE TABLE pii_vault_subjects (
    tenant_id    engram_tenant NOT NULL,
    kind         text NOT NULL,
    ordinal      integer NOT NULL,
    subject_key  text NOT NULL CHECK (subject_key ~ '^sk_[0-9a-f]{40}$'),
    sealed       bytea NOT NULL CHECK (octet_length(sealed) BETWEEN 29 AND 4096),  -- nonce || AES-GCM
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, kind, ordinal, subject_key),
    FOREIGN KEY (tenant_id, kind, ordinal) REFERENCES pii_vault (tenant_id, kind, ordinal) ON DELETE CASCADE
);
CREATE INDEX pii_vault_subjects_key ON pii_vault_subjects (tenant_id, subject_key);
ALTER TABLE pii_vault_subjects ENABLE ROW LEVEL SECURITY;
ALTER TABLE pii_vault_subjects FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON pii_vault_subjects
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON pii_vault_subjects TO engram_app;
