-- Embedding model migrations (SPEC 6.6): a new model's vectors are built beside the old ones; reads switch
-- when every memory has one; then the old vectors go. A catalogue row, not tenant data.
CREATE TABLE embedding_migrations (
    id           uuid PRIMARY KEY,
    from_model   text NOT NULL REFERENCES embedding_models (model_id),
    to_model     text NOT NULL REFERENCES embedding_models (model_id),
    to_spec      text NOT NULL CHECK (char_length(to_spec) BETWEEN 1 AND 300),  -- how to build its embedder
    state        text NOT NULL CHECK (state IN ('building', 'switched', 'done')),
    started_at   timestamptz NOT NULL DEFAULT now(),
    switched_at  timestamptz,
    finished_at  timestamptz,
    CHECK (from_model <> to_model)
);
-- One migration at a time.
CREATE UNIQUE INDEX embedding_migrations_one_open ON embedding_migrations ((true)) WHERE state <> 'done';
GRANT SELECT ON embedding_migrations TO engram_app;

-- While a migration is open, every memory written or rewritten, by any process, is queued for the new
-- model too, so nothing written meanwhile is left without its new vector.
CREATE FUNCTION engram_queue_for_migration() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO embedding_jobs (tenant_id, memory_id, model_id)
    SELECT NEW.tenant_id, NEW.id, m.to_model FROM embedding_migrations m WHERE m.state <> 'done'
    ON CONFLICT (tenant_id, memory_id, model_id) DO UPDATE SET not_before = now(), attempts = 0;
    RETURN NULL;
END
$$;
CREATE TRIGGER memories_queue_for_migration
    AFTER INSERT OR UPDATE OF content, summary ON memories
    FOR EACH ROW EXECUTE FUNCTION engram_queue_for_migration();
