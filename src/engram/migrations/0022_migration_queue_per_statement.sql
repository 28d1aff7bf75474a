-- The re-embedding queue trigger of 0020 ran a query for every memory inserted, whether or not a migration
-- was open: one per row on the write path's hottest statement. Inserts now queue in one statement per
-- INSERT (a transition table); a rewrite of content or summary stays per row (rare, and a column list
-- cannot go with a transition table).
DROP TRIGGER memories_queue_for_migration ON memories;

CREATE FUNCTION engram_queue_inserted_for_migration() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO embedding_jobs (tenant_id, memory_id, model_id)
    SELECT n.tenant_id, n.id, m.to_model FROM inserted n CROSS JOIN embedding_migrations m WHERE m.state <> 'done'
    ON CONFLICT (tenant_id, memory_id, model_id) DO UPDATE SET not_before = now(), attempts = 0;
    RETURN NULL;
END
$$;
CREATE TRIGGER memories_queue_inserted_for_migration
    AFTER INSERT ON memories REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION engram_queue_inserted_for_migration();
CREATE TRIGGER memories_queue_rewritten_for_migration
    AFTER UPDATE OF content, summary ON memories
    FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.summary IS DISTINCT FROM NEW.summary)
    EXECUTE FUNCTION engram_queue_for_migration();
