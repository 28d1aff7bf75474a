-- Recall receipts are written behind the answers, a batch at a time, and a batch holds the receipts of
-- many tenants. One statement writes the whole batch instead of a tenant switch and an insert per tenant
-- (which cost about as much again as the inserts themselves). Like engram_touch_memories it runs as the
-- owner, so the rows of every tenant in the batch go in under the caller's word that they belong there:
-- the receipts are built by recall, which read them under that tenant's row-level security. A receipt
-- already written (a batch tried again after a commit that was never acknowledged) is left as it is.
CREATE FUNCTION engram_insert_receipts(
    p_tenants text[], p_ids uuid[], p_created timestamptz[], p_actors text[], p_queries text[], p_requests jsonb[],
    p_retrievers jsonb[], p_selected jsonb[], p_tokens integer[], p_latency real[], p_degraded boolean[],
    p_abstained boolean[])
RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    WITH added AS (
        INSERT INTO recall_receipts (tenant_id, id, created_at, actor, query, request, retrievers, selected,
                                     packet_tokens, latency_ms, degraded, abstained)
        SELECT * FROM unnest(p_tenants, p_ids, p_created, p_actors, p_queries, p_requests, p_retrievers,
                             p_selected, p_tokens, p_latency, p_degraded, p_abstained)
        ON CONFLICT (tenant_id, id) DO NOTHING
        RETURNING 1)
    SELECT count(*)::integer FROM added
$$;
REVOKE ALL ON FUNCTION engram_insert_receipts(text[], uuid[], timestamptz[], text[], text[], jsonb[], jsonb[],
                                              jsonb[], integer[], real[], boolean[], boolean[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_insert_receipts(text[], uuid[], timestamptz[], text[], text[], jsonb[], jsonb[],
                                                 jsonb[], integer[], real[], boolean[], boolean[]) TO engram_app;
