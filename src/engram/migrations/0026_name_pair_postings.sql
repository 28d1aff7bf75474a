-- Name pairs in the postings: for each run of capitalised words in a memory's own text ("Marco V. Okafor",
-- "New York City"), every pair of its first four lexemes, as one posting "a&b" (the two in "C" order; no
-- text search lexeme holds '&'). In a large tenant a name's words each hold thousands of memories, and
-- lexical recall read the memories holding two of them together by intersecting both words' postings
-- (6,500 entries for one name at 100,000 memories, the dearest part of a one-scope recall); the pair's
-- postings are those memories, read directly (``retrieval.retrievers.lexical``). The pairs are postings
-- only: the search key, its length and BM25F are unchanged.

CREATE FUNCTION engram_name_pairs(cfg regconfig, body text)
RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH runs AS (  -- capitalised words (or initials) separated by whitespace only
        SELECT r.n, r.m[1] AS run
          FROM regexp_matches(coalesce(body, ''),
                              '((?:[A-Z](?:\.|[[:alnum:]''’-]*))(?:\s+[A-Z](?:\.|[[:alnum:]''’-]*))+)', 'g')
               WITH ORDINALITY AS r(m, n)
    ), words AS (
        SELECT DISTINCT r.n, w.lexeme
          FROM runs r, LATERAL (SELECT u.lexeme FROM unnest(to_tsvector(cfg, r.run)) u
                                 ORDER BY u.positions[1] LIMIT 4) w
    )
    SELECT DISTINCT a.lexeme || '&' || b.lexeme
      FROM words a JOIN words b ON a.n = b.n AND a.lexeme < b.lexeme COLLATE "C"
$$;

-- In a large tenant, the memories holding all of a query's common name words (``words``, the longest first,
-- two to four of them), at most ``lim``. First two of them: if the query names them as one name ("Amara K.
-- Silva"), the memories that do so too, from that pair's postings; if it does not (the first two words
-- then), or no memory does, the memories holding both anywhere, from the intersection of their postings
-- (an intersection, never a join: no estimate can make it quadratic). Then each further word is probed.
-- Called by lexical recall (``retrieval.retrievers.lexical``), under the caller's row-level security; with
-- fewer than two words it reads nothing (not even the query's pairs).
CREATE FUNCTION engram_name_holders(tenant text, cfg regconfig, query text, words text[], lim integer)
RETURNS SETOF uuid
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH duo AS MATERIALIZED (  -- the two words, in "C" order; ``o`` 0 if the query names them as one
        SELECT split_part(d.n, '&', 1) AS a, split_part(d.n, '&', 2) AS b, d.o
          FROM (SELECT n, 0 AS o FROM engram_name_pairs(cfg, query) n
                UNION ALL
                SELECT CASE WHEN words[1] < words[2] COLLATE "C" THEN words[1] || '&' || words[2]
                            ELSE words[2] || '&' || words[1] END, 1) d
         WHERE cardinality(words) >= 2
           AND split_part(d.n, '&', 1) = ANY(words) AND split_part(d.n, '&', 2) = ANY(words)
         ORDER BY d.o, length(d.n) DESC, d.n COLLATE "C"
         LIMIT 1
    ), named AS MATERIALIZED (
        SELECT memory_id FROM search_postings
         WHERE tenant_id = tenant AND lexeme = (SELECT a || '&' || b FROM duo WHERE o = 0)
    ), pair AS MATERIALIZED (
        SELECT memory_id FROM named
        UNION ALL
        SELECT memory_id
          FROM (SELECT memory_id FROM search_postings WHERE tenant_id = tenant AND lexeme = (SELECT a FROM duo)
                INTERSECT
                SELECT memory_id FROM search_postings WHERE tenant_id = tenant AND lexeme = (SELECT b FROM duo)) x
         WHERE NOT EXISTS (SELECT 1 FROM named)
    )
    SELECT h.memory_id FROM pair h
     WHERE NOT EXISTS (SELECT 1 FROM unnest(words) AS c(lexeme)
                        WHERE c.lexeme NOT IN (SELECT a FROM duo UNION ALL SELECT b FROM duo)
                          AND NOT EXISTS (SELECT 1 FROM search_postings p
                                           WHERE p.tenant_id = tenant AND p.lexeme = c.lexeme
                                             AND p.memory_id = h.memory_id))
     LIMIT lim
$$;

-- A memory's postings: its search key's lexemes, then its name pairs (weight 1, its key's length).
CREATE FUNCTION engram_memory_postings(key tsvector, cfg regconfig, summary text, content text)
RETURNS TABLE (lexeme text, tf real)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p.lexeme, p.tf FROM engram_postings(key) p
    UNION ALL
    SELECT n, 1::real FROM engram_name_pairs(cfg, coalesce(summary || ' ', '') || content) n
$$;

CREATE OR REPLACE FUNCTION engram_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl, scope_owner)
    SELECT n.tenant_id, p.lexeme, n.id, p.tf, n.search_len, n.scope_owner
      FROM new_rows n, engram_memory_postings(n.search_key, n.fts_config, n.summary, n.content) p;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION engram_postings_replace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM search_postings
         WHERE tenant_id = OLD.tenant_id AND memory_id = OLD.id
           AND lexeme = ANY(ARRAY(SELECT p.lexeme
                                    FROM engram_memory_postings(OLD.search_key, OLD.fts_config, OLD.summary,
                                                                OLD.content) p));
    END IF;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl, scope_owner)
        SELECT NEW.tenant_id, p.lexeme, NEW.id, p.tf, NEW.search_len, NEW.scope_owner
          FROM engram_memory_postings(NEW.search_key, NEW.fts_config, NEW.summary, NEW.content) p;
    END IF;
    RETURN NULL;
END
$$;

-- An edit that changes only a name's capitals leaves the search key alone but not the pairs. Only updates
-- naming the text's columns are looked at (usage counters and status changes never compare texts).
CREATE TRIGGER memories_postings_names AFTER UPDATE OF content, summary ON memories
    FOR EACH ROW WHEN (OLD.search_key = NEW.search_key AND OLD.scope_owner IS NOT DISTINCT FROM NEW.scope_owner
                       AND (OLD.content IS DISTINCT FROM NEW.content OR OLD.summary IS DISTINCT FROM NEW.summary))
    EXECUTE FUNCTION engram_postings_replace();

INSERT INTO search_postings (tenant_id, lexeme, memory_id, tf, dl, scope_owner)
SELECT m.tenant_id, n, m.id, 1, m.search_len, m.scope_owner
  FROM memories m, engram_name_pairs(m.fts_config, coalesce(m.summary || ' ', '') || m.content) n
ON CONFLICT DO NOTHING;
