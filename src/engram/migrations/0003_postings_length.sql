-- The postings carry their document's length (memories.search_len), so lexical recall can score BM25F
-- from the postings index alone and visit the memories table only for its best-scored documents (to apply
-- the filter) instead of for every document that holds a query term.

ALTER TABLE search_postings ADD COLUMN dl real NOT NULL DEFAULT 0;

UPDATE search_postings p SET dl = m.search_len
  FROM memories m
 WHERE m.tenant_id = p.tenant_id AND m.id = p.memory_id;

ALTER TABLE search_postings DROP CONSTRAINT search_postings_pkey;
ALTER TABLE search_postings ADD PRIMARY KEY (tenant_id, lexeme, memory_id) INCLUDE (tf, dl);

CREATE OR REPLACE FUNCTION engram_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl)
    SELECT n.tenant_id, p.lexeme, n.id, p.tf, n.search_len FROM new_rows n, engram_postings(n.search_key) p;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION engram_postings_replace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM search_postings
         WHERE tenant_id = OLD.tenant_id AND lexeme = ANY(tsvector_to_array(OLD.search_key)) AND memory_id = OLD.id;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl)
        SELECT NEW.tenant_id, p.lexeme, NEW.id, p.tf, NEW.search_len FROM engram_postings(NEW.search_key) p;
    END IF;
    RETURN NULL;
END
$$;

-- Usage statistics of recalled memories, for many tenants in one statement: recall gathers them and writes
-- them about once a second, off its hot path. Only the usage columns change, only for the given pairs.
-- Rows locked by a writer are skipped (never waited for, so never a deadlock): a usage count is a hint.
CREATE FUNCTION engram_touch_memories(p_tenants text[], p_ids uuid[], p_counts integer[])
RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    UPDATE memories m SET last_used_at = now(), use_count = m.use_count + u.n
      FROM (SELECT x.tenant_id, x.id, t.n
              FROM unnest(p_tenants, p_ids, p_counts) AS t(tenant_id, id, n)
              JOIN memories x ON x.tenant_id = t.tenant_id AND x.id = t.id
               FOR UPDATE OF x SKIP LOCKED) u
     WHERE m.tenant_id = u.tenant_id AND m.id = u.id
$$;
REVOKE ALL ON FUNCTION engram_touch_memories(text[], uuid[], integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_touch_memories(text[], uuid[], integer[]) TO engram_app;
