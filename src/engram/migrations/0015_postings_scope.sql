-- The postings carry their memory's owner (migration 0014), so lexical recall over a small scope in a large
-- tenant reads only that scope's postings of the query's words (a user's hundred memories among a tenant's
-- hundred thousand) instead of every scope row's search key. Only owned postings are indexed by owner:
-- shared memories are read from their rows, as few as a scope recall allows (``retrieval.scope``).
ALTER TABLE search_postings ADD COLUMN scope_owner text;

UPDATE search_postings p SET scope_owner = m.scope_owner
  FROM memories m
 WHERE m.tenant_id = p.tenant_id AND m.id = p.memory_id AND m.scope_owner IS NOT NULL;

CREATE INDEX search_postings_scope_owned ON search_postings (tenant_id, scope_owner, lexeme)
    INCLUDE (memory_id, tf, dl) WHERE scope_owner IS NOT NULL;

CREATE OR REPLACE FUNCTION engram_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl, scope_owner)
    SELECT n.tenant_id, p.lexeme, n.id, p.tf, n.search_len, n.scope_owner
      FROM new_rows n, engram_postings(n.search_key) p;
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
        INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl, scope_owner)
        SELECT NEW.tenant_id, p.lexeme, NEW.id, p.tf, NEW.search_len, NEW.scope_owner
          FROM engram_postings(NEW.search_key) p;
    END IF;
    RETURN NULL;
END
$$;

-- A memory whose visibility, user or workflow changes moves its postings to its new owner.
DROP TRIGGER memories_postings_update ON memories;
CREATE TRIGGER memories_postings_update AFTER UPDATE ON memories
    FOR EACH ROW WHEN (OLD.search_key IS DISTINCT FROM NEW.search_key OR OLD.scope_owner IS DISTINCT FROM NEW.scope_owner)
    EXECUTE FUNCTION engram_postings_replace();
