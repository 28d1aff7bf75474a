-- The PII vault (SPEC 4.5): the real values behind the placeholders that stored text holds (EMAIL_1,
-- PERSON_A). A value is sealed with authenticated encryption by the service (keys from its configuration,
-- never in the database) and found again by a keyed hash of its normal form, so the same value gets the same
-- placeholder across a tenant without the database learning it.
CREATE TABLE pii_vault (
    tenant_id  engram_tenant NOT NULL REFERENCES tenants (tenant_id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('email', 'phone', 'card', 'iban', 'national_id', 'ip', 'person')),
    ordinal    integer NOT NULL CHECK (ordinal > 0),
    value_hash bytea NOT NULL CHECK (octet_length(value_hash) = 32),  -- HMAC-SHA256 under key_id's index key
    key_id     text NOT NULL CHECK (key_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    sealed     bytea NOT NULL CHECK (octet_length(sealed) BETWEEN 29 AND 4096),  -- nonce || AES-GCM
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, kind, ordinal),
    UNIQUE (tenant_id, kind, value_hash)
);
ALTER TABLE pii_vault ENABLE ROW LEVEL SECURITY;
ALTER TABLE pii_vault FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON pii_vault
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON pii_vault TO engram_app;

-- A key may reveal personal data without the admin role.
ALTER TABLE api_keys ADD COLUMN can_reveal boolean NOT NULL DEFAULT false;
