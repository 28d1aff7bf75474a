-- Owners' HNSW indexes name the owner as (scope_owner = '...') IS TRUE (``store.scope_indexes``): a plain
-- equality in the predicate of every large owner's index made the planner evaluate the owner against each
-- of them for any statement on memory_embeddings. The indexes of the earlier form are dropped here (in the
-- migration's transaction, briefly locking the table); maintenance builds the new ones, and until then
-- those owners' recalls read through the tenant's index or the shared one (``retrieval.scope``).
DO $$
DECLARE
    name text;
BEGIN
    FOR name IN
        SELECT indexname FROM pg_indexes
         WHERE tablename = 'memory_embeddings' AND schemaname = current_schema()
           AND indexname ~ '^memory_embeddings_hnsw_[0-9a-f]{16}_o[0-9a-f]{12}(_ctx)?_h32$'
    LOOP
        EXECUTE format('DROP INDEX %I', name);
    END LOOP;
END
$$;
