-- Retrieval: weighted search keys with conversational context, context vectors, speakers, receipts.
--
-- A memory's search key is one tsvector with weight labels:
--   A (1.0)  its own text (summary + content) and the date it became valid, in words
--   B (0.5)  the previous and next memory of the same session
--   C (0.25) the memories two steps away in the same session
-- Lexical retrieval scores it with BM25F (tf = sum of the weights of a lexeme's positions).

DROP INDEX memories_fts;
ALTER TABLE memories DROP COLUMN fts;

ALTER TABLE memories
    ADD COLUMN search_key tsvector NOT NULL DEFAULT ''::tsvector,
    ADD COLUMN search_len real NOT NULL DEFAULT 0,
    ADD COLUMN archived_at timestamptz,
    ADD COLUMN speaker text GENERATED ALWAYS AS (left(metadata ->> 'speaker', 200)) STORED;

CREATE INDEX memories_search_key ON memories USING gin (search_key);
CREATE INDEX memories_session_order ON memories (tenant_id, session_id, valid_from, id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_speaker ON memories (tenant_id, speaker) WHERE speaker IS NOT NULL;

-- The date a memory became valid, in words, so "in May 2023" or "on a Monday" can match it.
CREATE FUNCTION engram_date_text(ts timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_char(ts AT TIME ZONE 'UTC', 'FMDay FMDD FMMonth YYYY')
$$;

CREATE FUNCTION engram_search_key(cfg regconfig, body text, valid_from timestamptz, near text, far text)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector(cfg, coalesce(body, '')), 'A')
        || setweight(to_tsvector(cfg, engram_date_text(valid_from)), 'A')
        || setweight(to_tsvector(cfg, coalesce(near, '')), 'B')
        || setweight(to_tsvector(cfg, coalesce(far, '')), 'C')
$$;

-- Document length for BM25F: the weights of all positions, summed.
CREATE FUNCTION engram_key_len(key tsvector) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(CASE w WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.5 WHEN 'C' THEN 0.25 ELSE 0.1 END), 0)::real
      FROM unnest(key) u, unnest(u.weights) w
$$;

-- Own text only; memories in a session get their neighbours added by engram_refresh_sessions.
CREATE FUNCTION engram_memories_search_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_key := engram_search_key(
        NEW.fts_config, coalesce(NEW.summary || ' ', '') || NEW.content, NEW.valid_from, NULL, NULL);
    NEW.search_len := engram_key_len(NEW.search_key);
    RETURN NEW;
END
$$;

CREATE TRIGGER memories_search_key
    BEFORE INSERT OR UPDATE OF content, summary, valid_from, fts_config ON memories
    FOR EACH ROW EXECUTE FUNCTION engram_memories_search_key();

-- The second vector of a memory in a conversation: its own vector plus its neighbours', weighted
-- 1 : 0.5 : 0.25 by distance (as 4 : 2 : 1), normalised. NULL for memories outside sessions.
ALTER TABLE memory_embeddings ADD COLUMN context_embedding vector;

-- Rebuild the search keys and context vectors of the given sessions (after writes, deletes, enrichment).
-- With p_ids, only the memories within two positions of those ids are rebuilt (a long session costs a scan
-- of its rows, not a rebuild of every key); with NULL, every memory of the sessions.
-- Runs with the caller's rights, so row-level security applies.
CREATE FUNCTION engram_refresh_sessions(
    p_tenant text, p_sessions text[], p_model text, p_dims integer, p_ids uuid[] DEFAULT NULL)
RETURNS void
LANGUAGE sql AS $$
    WITH ordered AS (
        SELECT o.id, o.session_id, o.fts_config, o.valid_from, o.body,
               row_number() OVER s AS pos,
               concat_ws(' ', lag(o.body) OVER s, lead(o.body) OVER s) AS near,
               concat_ws(' ', lag(o.body, 2) OVER s, lead(o.body, 2) OVER s) AS far
          FROM (SELECT m.id, m.session_id, m.fts_config, m.valid_from,
                       coalesce(m.summary || ' ', '') || m.content AS body
                  FROM memories m
                 WHERE m.tenant_id = p_tenant AND m.session_id = ANY(p_sessions)
                   AND m.status IN ('active', 'superseded', 'archived')) o
        WINDOW s AS (PARTITION BY o.session_id ORDER BY o.valid_from, o.id)
    ), changed AS (
        SELECT session_id, pos FROM ordered WHERE id = ANY(p_ids)
    ), keyed AS (
        SELECT a.id, engram_search_key(a.fts_config, a.body, a.valid_from, a.near, a.far) AS key
          FROM ordered a
         WHERE p_ids IS NULL
            OR EXISTS (SELECT 1 FROM changed c WHERE c.session_id = a.session_id AND abs(c.pos - a.pos) <= 2)
    )
    UPDATE memories t SET search_key = k.key, search_len = engram_key_len(k.key)
      FROM keyed k
     WHERE t.tenant_id = p_tenant AND t.id = k.id AND t.search_key IS DISTINCT FROM k.key;

    WITH zero AS (SELECT array_fill(0::real, ARRAY[p_dims])::vector AS z),
    ordered AS (
        SELECT m.id, m.session_id, e.embedding AS v,
               row_number() OVER (PARTITION BY m.session_id ORDER BY m.valid_from, m.id) AS pos
          FROM memories m
          LEFT JOIN memory_embeddings e
            ON e.tenant_id = m.tenant_id AND e.memory_id = m.id AND e.model_id = p_model
         WHERE m.tenant_id = p_tenant AND m.session_id = ANY(p_sessions)
           AND m.status IN ('active', 'superseded', 'archived')
    ), mixed AS (
        SELECT o.id, o.session_id, o.pos, o.v,
               coalesce(lag(o.v) OVER s, z) + coalesce(lead(o.v) OVER s, z) AS near,
               coalesce(lag(o.v, 2) OVER s, z) + coalesce(lead(o.v, 2) OVER s, z) AS far
          FROM ordered o, zero
        WINDOW s AS (PARTITION BY o.session_id ORDER BY o.pos)
    ), changed AS (
        SELECT session_id, pos FROM ordered WHERE id = ANY(p_ids)
    )
    UPDATE memory_embeddings t
       SET context_embedding = l2_normalize(x.v + x.v + x.v + x.v + x.near + x.near + x.far)
      FROM mixed x
     WHERE t.tenant_id = p_tenant AND t.memory_id = x.id AND t.model_id = p_model AND x.v IS NOT NULL
       AND (p_ids IS NULL
            OR EXISTS (SELECT 1 FROM changed c WHERE c.session_id = x.session_id AND abs(c.pos - x.pos) <= 2));
$$;

-- An inverted index of the search keys per tenant: lexical recall reads only the postings of the query's
-- lexemes (and their document frequencies from the same index) instead of every matching key.
CREATE TABLE search_postings (
    tenant_id engram_tenant NOT NULL,
    lexeme    text NOT NULL,
    memory_id uuid NOT NULL,
    tf        real NOT NULL,  -- the weights of the lexeme's positions in the key, summed
    PRIMARY KEY (tenant_id, lexeme, memory_id) INCLUDE (tf)  -- postings are read from the index alone
);
ALTER TABLE search_postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON search_postings
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
GRANT SELECT, INSERT, DELETE ON search_postings TO engram_app;

CREATE FUNCTION engram_postings(key tsvector)
RETURNS TABLE (lexeme text, tf real)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT u.lexeme,
           (SELECT sum(CASE w WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.5 WHEN 'C' THEN 0.25 ELSE 0.1 END)
              FROM unnest(u.weights) w)::real
      FROM unnest(key) u
$$;

-- Statement-level triggers keep the postings in step with memories.search_key (one INSERT ... SELECT per
-- statement, however many rows it touched).
CREATE FUNCTION engram_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf)
    SELECT n.tenant_id, p.lexeme, n.id, p.tf FROM new_rows n, engram_postings(n.search_key) p;
    RETURN NULL;
END
$$;

CREATE FUNCTION engram_postings_replace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM search_postings
         WHERE tenant_id = OLD.tenant_id AND lexeme = ANY(tsvector_to_array(OLD.search_key)) AND memory_id = OLD.id;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf)
        SELECT NEW.tenant_id, p.lexeme, NEW.id, p.tf FROM engram_postings(NEW.search_key) p;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_postings_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_postings_insert();
-- Row-level with a WHEN: updates that leave the key alone (usage counters, status) cost nothing here.
CREATE TRIGGER memories_postings_update AFTER UPDATE ON memories
    FOR EACH ROW WHEN (OLD.search_key IS DISTINCT FROM NEW.search_key) EXECUTE FUNCTION engram_postings_replace();
CREATE TRIGGER memories_postings_delete AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION engram_postings_replace();

-- Backfill what 0001 stored.
UPDATE memories SET search_key = engram_search_key(
    fts_config, coalesce(summary || ' ', '') || content, valid_from, NULL, NULL);
UPDATE memories SET search_len = engram_key_len(search_key);

-- Recall receipts (SPEC 5.6): who asked what, every retriever's candidates, what was selected and why.
CREATE TABLE recall_receipts (
    tenant_id   engram_tenant NOT NULL,
    id          uuid NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    actor       text NOT NULL,
    query       text NOT NULL,
    request     jsonb NOT NULL,
    retrievers  jsonb NOT NULL,
    selected    jsonb NOT NULL,
    packet_tokens integer NOT NULL,
    latency_ms  real NOT NULL,
    degraded    boolean NOT NULL,
    abstained   boolean NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX recall_receipts_selected ON recall_receipts USING gin (selected jsonb_path_ops);

ALTER TABLE recall_receipts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON recall_receipts
    USING (tenant_id = current_setting('engram.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('engram.tenant_id', true));
GRANT SELECT, INSERT, DELETE ON recall_receipts TO engram_app;

CREATE INDEX relations_src ON relations (tenant_id, src_id);
