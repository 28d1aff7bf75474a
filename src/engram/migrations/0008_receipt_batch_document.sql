-- A batch of receipts travels as one JSON document (an array of receipts) instead of twelve arrays, one per
-- column. The arrays were dumped by the client one element at a time (three of them arrays of JSON
-- documents): about 0.3-0.6 ms of the recall process's time a receipt, against about 0.1 ms for the whole
-- document encoded at once. The row-wise insert is the same as engram_insert_receipts' (migration 0006),
-- which stays for processes of the previous version during an upgrade.
CREATE FUNCTION engram_insert_receipt_batch(p_receipts jsonb)
RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    WITH added AS (
        INSERT INTO recall_receipts (tenant_id, id, created_at, actor, query, request, retrievers, selected,
                                     packet_tokens, latency_ms, degraded, abstained)
        SELECT r.tenant_id, r.id, r.created_at, r.actor, r.query, r.request, r.retrievers, r.selected,
               r.packet_tokens, r.latency_ms, r.degraded, r.abstained
          FROM jsonb_to_recordset(p_receipts) AS r(
                   tenant_id text, id uuid, created_at timestamptz, actor text, query text, request jsonb,
                   retrievers jsonb, selected jsonb, packet_tokens integer, latency_ms real, degraded boolean,
                   abstained boolean)
        ON CONFLICT (tenant_id, id) DO NOTHING
        RETURNING 1)
    SELECT count(*)::integer FROM added
$$;
REVOKE ALL ON FUNCTION engram_insert_receipt_batch(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_insert_receipt_batch(jsonb) TO engram_app;
