"""The lexical retriever: BM25F over the weighted search keys' postings, in one statement that chooses the
query's lexemes itself."""

from __future__ import annotations

import functools
from typing import Any, LiteralString

from psycopg import sql

from engram.retrieval.filter import filter_clause, scope_window
from engram.retrieval.retrievers.base import Hit, Search
from engram.retrieval.retrievers.columns import (
    CANDIDATE_COLUMNS,
    CANDIDATE_NULLS,
    COSINE_COLUMNS,
    NO_COSINES,
    VECTOR_JOIN,
    RowCursor,
    compact,
    cosine_params,
    execute,
    finish,
    read_hits,
)
from engram.store.database import Conn

# BM25F over the postings of the query's kept lexemes (``{terms}``), scored from the postings index alone
# (it carries each document's tf and length). The filter is applied inside the same statement, to the best
# ``window`` documents first: when at least ``limit`` of them pass, they are exactly the top ``limit`` of
# the filtered ranking (every document outside the window scores no higher than every one inside it). Only
# when too few pass, and there are more scored documents, does the second branch filter the rest; it is
# skipped otherwise. The result is the same as filtering every document before ranking, while a large
# tenant visits a few hundred memories instead of thousands. Each row also carries its ``term_share``: the
# share of the query's idf weight that the memory holds, over the lexemes read that the tenant knows (a
# word no memory holds cannot tell one memory from another), which recall's relevance floor asks of a
# memory found by words alone.
_RANKED: LiteralString = """
WITH {terms} post AS MATERIALIZED ({post}
), idf AS MATERIALIZED (
    SELECT lexeme, ln((greatest(%(n_docs)s::float8, d) - d + 0.5) / (d + 0.5) + 1) AS w
      FROM (SELECT lexeme, coalesce(max(df), count(*)) AS d FROM post GROUP BY lexeme) x
), scored AS MATERIALIZED (
    SELECT p.memory_id AS id,
           sum(i.w * p.tf * (%(k1)s::float8 + 1)
               / (p.tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * p.dl / %(avgdl)s::float8))) AS score,
           sum(i.w) / (SELECT sum(w) FROM idf) AS term_share
      FROM post p JOIN idf i ON i.lexeme = p.lexeme
     GROUP BY p.memory_id
), best AS MATERIALIZED (
    SELECT id, score, term_share FROM scored ORDER BY score DESC, id LIMIT %(window)s
), seen AS NOT MATERIALIZED (  -- read only where joined, as if written out there
    SELECT m.id, {columns} FROM memories m WHERE {filter}
), passed AS MATERIALIZED (
    SELECT m.*, b.score, b.term_share FROM best b JOIN seen m ON m.id = b.id
)"""
_TOP: LiteralString = """
SELECT * FROM passed
UNION ALL
SELECT m.*, s.score, s.term_share
  FROM scored s JOIN seen m ON m.id = s.id
 WHERE (SELECT count(*) FROM passed) < %(limit)s AND (SELECT count(*) FROM scored) > %(window)s
   AND s.id NOT IN (SELECT id FROM best)
 ORDER BY score DESC, id
 LIMIT %(limit)s
"""
LEXICAL: LiteralString = _RANKED + _TOP
LEXICAL_WINDOW = 4  # the window is this many times the candidates wanted

# LEXICAL returning its best ``%(limit)s`` rows, then the next ``%(tail)s`` of the unfiltered ranking as
# their id, score and term share alone (the other columns NULL): no memory looked up, no cosines read.
# Recall keeps such a row only where the dense side found the memory (``gather``), which gives it the rest.
_WITH_TAIL: LiteralString = """{ranked}, top AS MATERIALIZED ({top}
)
SELECT h.*{cosines} FROM top h{vectors}
UNION ALL
(SELECT s.id, {nulls}, s.score, s.term_share{no_cosines}
   FROM scored s WHERE s.id NOT IN (SELECT id FROM top) ORDER BY s.score DESC, s.id LIMIT %(tail)s)"""
# The tenant's postings of the query's lexemes (``{lexemes}``), and of its names' common words together.
_TENANT_POST: LiteralString = """
    SELECT p.lexeme, p.memory_id, p.tf, p.dl, NULL::float8 AS df
      FROM search_postings p
     WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = ANY({lexemes}){together}"""

# The query's lexemes (the tenant's text search configuration) with their document frequencies in the
# tenant, counted up to ``cap``: a lexeme with more postings than the budget is too common to read anyway.
# At most QUERY_TERM_LIMIT of them, the longest (the rarer, as a rule): each costs an index probe of up to
# ``cap`` postings, and a query is a question, not a document.
_QUERY_TERM_LIMIT: LiteralString = "64"
QUERY_TERM_LIMIT = int(_QUERY_TERM_LIMIT)
QUERY_TERMS: LiteralString = (
    """
SELECT l.lexeme,
       (SELECT count(*) FROM (SELECT 1 FROM search_postings p
                               WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = l.lexeme LIMIT {cap}) x) AS n
  FROM (SELECT u.lexeme FROM unnest(tsvector_to_array(to_tsvector(%(fts)s::regconfig, %(query)s))) AS u(lexeme)
         ORDER BY length(u.lexeme) DESC, u.lexeme LIMIT """
    + _QUERY_TERM_LIMIT
    + ") l"
)

# Which of those terms are read: the rarest whose postings fit the budget; with ``rarest``, at least the
# rarest one even if it does not fit. A lexeme left out is so common in this tenant that its idf is small:
# it acts as a stop word here. Small corpora keep every lexeme (exact BM25F); large ones stay fast. Without
# ``rarest`` a query made only of such lexemes keeps none (recall does so when dense retrievers answer
# beside it: reading a near stop word's thousands of postings is the dearest part of a large tenant's
# recall). The query counts the exact document frequencies of what it reads.
_KEPT_TERMS: LiteralString = (
    "terms AS MATERIALIZED ("
    + QUERY_TERMS
    + """), kept AS (
    SELECT lexeme
      FROM (SELECT lexeme, sum(n) OVER w AS used, row_number() OVER w AS k FROM terms
             WINDOW w AS (ORDER BY n, lexeme COLLATE "C" ROWS UNBOUNDED PRECEDING)) t
     WHERE used <= {budget} OR (k = 1 AND {rarest})
),"""
)

# In a tenant of a few thousand memories or more a word over the budget is often a name or a topic rather
# than a stop word, and the query's such words together pick out a few memories ("Amara K. Silva": three
# words of thousands of memories each, one person's facts together). Only the words of the query's names
# are read so (``query.names``, lower-cased in ``%(named)s``; their stems begin the names): common topic
# words together ("mobile app reported") still match thousands, and cost more than they tell (the tenants
# bench's p95 went from 9 to 25 ms). For such a tenant (``together``; in a small one they are true stop
# words) the statement keeps the rarest terms within the budget as always and, when the budget left out a name word
# (over it alone, or only with the rarer ones: two words of 250 and 400 memories against 500), also reads
# the memories holding all of the query's name words together (two to four, the longest), up to ``budget``
# of them (``engram_name_holders``, migration 0026): two of them read as one name from that pair's
# postings when the query names them so ("Marco V. Okafor": about 100 postings), or else from the
# intersection of the two words' postings (each read from the primary key: about 1 ms for words of
# 2,500-4,000 memories at 100,000, the dearest part of a one-scope recall before the pairs), then each
# further word probed for the few memories both hold. The words are chosen inside the statement, so it is
# one round trip and its plan is reused. (The GIN index of the search keys cannot serve this under
# row-level security: ``@@`` is not leakproof, so it is never an index condition.) Their postings of the
# words left out join the others, each counted as in the tenant up to just over the budget (a word's exact
# count past it is what was not read), read for each of those memories from the primary key (``OFFSET 0``
# keeps the probe: a generic plan would otherwise hash-join every posting of the words, 10,000 of them for
# three names' words).
_TOGETHER_TERMS: LiteralString = """ naming AS MATERIALIZED (
    SELECT lexeme, n, lexeme IN (SELECT lexeme FROM kept) AS whole
      FROM terms t
     WHERE n > 0 AND EXISTS (SELECT 1 FROM unnest(%(named)s::text[]) AS w(name) WHERE starts_with(w.name, t.lexeme))
), common AS MATERIALIZED (
    SELECT lexeme, n, whole, row_number() OVER (ORDER BY length(lexeme) DESC, lexeme COLLATE "C") AS k
      FROM naming
     WHERE EXISTS (SELECT 1 FROM naming WHERE NOT whole)
     ORDER BY k LIMIT {words}
), holding AS MATERIALIZED (  -- migration 0026
    SELECT id FROM engram_name_holders(%(tenant_id)s, %(fts)s::regconfig, %(query)s,
                                       ARRAY(SELECT lexeme FROM common ORDER BY k), {budget}) AS h(id)
     WHERE EXISTS (SELECT 1 FROM common)  -- not called at all for a query the budget left whole
),"""
_TOGETHER_POSTINGS: LiteralString = """
    UNION ALL
    SELECT p.lexeme, p.memory_id, p.tf, p.dl, (SELECT c.n FROM common c WHERE c.lexeme = p.lexeme)::float8
      FROM holding h CROSS JOIN LATERAL (
           SELECT p.lexeme, p.memory_id, p.tf, p.dl FROM search_postings p
            WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = ANY(ARRAY(SELECT lexeme FROM common WHERE NOT whole))
              AND p.memory_id = h.id OFFSET 0) p"""
TOGETHER_MIN_DOCS = 4  # times the postings budget: the tenants whose name words are read together
LARGE_MIN_DOCS = 20  # times the postings budget: a large tenant (``large``)
_TOGETHER_WORDS: LiteralString = "4"  # at most this many name words are read together


def together(n_docs: int, budget: int) -> bool:
    """A tenant large enough that a word the postings budget leaves out may be a name (``TOGETHER_MIN_DOCS``):
    in a smaller one the words past the budget are in a large share of its memories, true stop words."""
    return n_docs >= TOGETHER_MIN_DOCS * budget


def large(n_docs: int, budget: int) -> bool:
    """A tenant in which a word over the postings budget is a few percent of the memories at most
    (``LARGE_MIN_DOCS``): a small scope's postings of such a word are mostly other scopes' (``retrieval.gather``)."""
    return n_docs >= LARGE_MIN_DOCS * budget


# BM25F over a small scope in a large tenant (``retrieval.scope``): the scope is the corpus (its size,
# ``%(n_docs)s``, and document frequencies), as for a user whose memories are a few hundred among a tenant's
# hundred thousand; the tenant's postings of a common name would mostly be other users' documents. The
# scope's owned postings are read through their owner's index (migration 0015), its shared memories (few,
# or the plan would not be this one) from their rows, those holding a query lexeme unnested. Every query
# lexeme is read (up to QUERY_TERM_LIMIT, as in QUERY_TERMS): no postings budget is needed when the rows
# are few. Ranked and filtered as LEXICAL ranks and filters the tenant's.
_SCOPE_TERMS: LiteralString = (
    """q AS MATERIALIZED (
    SELECT u.lexeme FROM unnest(tsvector_to_array(to_tsvector(%(fts)s::regconfig, %(query)s))) AS u(lexeme)
     ORDER BY length(u.lexeme) DESC, u.lexeme LIMIT """
    + _QUERY_TERM_LIMIT
    + """
), tq AS MATERIALIZED (  -- any of the query's lexemes (the type's own quoting, & turned into |)
    SELECT replace(plainto_tsquery(%(fts)s::regconfig, %(query)s)::text, ' & ', ' | ')::tsquery AS t
),"""
)
_SCOPE_POST: LiteralString = """
    SELECT p.lexeme, p.memory_id, p.tf, p.dl, NULL::float8 AS df
      FROM search_postings p
     WHERE p.tenant_id = %(tenant_id)s AND p.scope_owner = ANY(%(owners)s) AND p.lexeme IN (SELECT lexeme FROM q)
    UNION ALL
    SELECT p.lexeme, m.id, p.tf, m.search_len, NULL::float8
      FROM memories m CROSS JOIN LATERAL engram_postings(m.search_key) p
     WHERE m.scope_owner IS NULL AND {filter} AND m.search_key @@ (SELECT t FROM tq)
       AND p.lexeme IN (SELECT lexeme FROM q)"""


@functools.lru_cache(maxsize=256)
def scope_statement(shape: tuple[str, ...], cosines: bool, tail: bool = False) -> bytes:
    """LEXICAL over a small scope's postings (``_SCOPE_POST``) for a filter shape; with ``tail``, followed
    by the ranking's next rows as their scores alone (``_WITH_TAIL``)."""
    where = filter_clause(shape)
    parts = {"terms": sql.SQL(_SCOPE_TERMS), "post": sql.SQL(_SCOPE_POST).format(filter=where), "filter": where,
             "columns": sql.SQL(CANDIDATE_COLUMNS)}  # fmt: skip
    if not tail:
        return finish(sql.SQL(LEXICAL).format(**parts), cosines)
    return compact(sql.SQL(_WITH_TAIL).format(
        ranked=sql.SQL(_RANKED).format(**parts), top=sql.SQL(_TOP), nulls=sql.SQL(CANDIDATE_NULLS),
        cosines=sql.SQL(COSINE_COLUMNS if cosines else ""), vectors=sql.SQL(VECTOR_JOIN if cosines else ""),
        no_cosines=sql.SQL(NO_COSINES if cosines else ""),
    ).as_bytes())  # fmt: skip


@functools.lru_cache(maxsize=256)
def statement(shape: tuple[str, ...], cosines: bool, budget: int, rarest: bool, together: bool = False) -> bytes:
    """LEXICAL for a filter shape, choosing its lexemes within ``budget`` postings (``_KEPT_TERMS``); with
    ``together``, also reading the memories that hold all of the query's common name words
    (``_TOGETHER_TERMS``)."""
    limits = {"cap": sql.Literal(budget + 1), "budget": sql.Literal(budget)}
    terms = sql.SQL(_KEPT_TERMS).format(rarest=sql.Literal(rarest), **limits)
    if together:
        terms += sql.SQL(_TOGETHER_TERMS).format(words=sql.SQL(_TOGETHER_WORDS), **limits)
    post = sql.SQL(_TENANT_POST).format(
        lexemes=sql.SQL("ARRAY(SELECT lexeme FROM kept)"),
        together=sql.SQL(_TOGETHER_POSTINGS if together else "").format(**limits),
    )
    inner = sql.SQL(LEXICAL).format(
        terms=terms, post=post, filter=filter_clause(shape), columns=sql.SQL(CANDIDATE_COLUMNS)
    )
    return finish(inner, cosines)


@functools.lru_cache(maxsize=64)
def given_statement(shape: tuple[str, ...]) -> bytes:
    """LEXICAL over given lexemes (``%(lexemes)s``): what the tests compare the statement's own choice by."""
    post = sql.SQL(_TENANT_POST).format(lexemes=sql.SQL("%(lexemes)s::text[]"), together=sql.SQL(""))
    inner = sql.SQL(LEXICAL).format(
        terms=sql.SQL(""), post=post, filter=filter_clause(shape), columns=sql.SQL(CANDIDATE_COLUMNS)
    )
    return finish(inner, False)


def parameters(search: Search) -> dict[str, Any]:
    """LEXICAL's parameters but for the lexemes (``{lexemes}``)."""
    cfg = search.cfg
    return {
        **search.where.params,
        "n_docs": search.n_docs,
        "avgdl": max(search.avgdl, 1e-6),
        "k1": cfg.bm25_k1,
        "b": cfg.bm25_b,
        "limit": search.lexical_limit,
        "window": (
            scope_window(search.lexical_limit, search.where.shape, LEXICAL_WINDOW)
            if search.scope_lexical
            else search.lexical_limit * LEXICAL_WINDOW
        ),
    }


class Lexical:
    """BM25F candidates; with the query vector, their rows carry its cosines too."""

    name = "lexical"

    async def send(self, conn: Conn, search: Search) -> RowCursor:
        params = {**parameters(search), "query": search.text, "fts": search.fts}
        cosines = cosine_params(params, search.vector, search.model_id)
        budget = search.cfg.lexical_postings_budget
        if search.scope_lexical:
            params["n_docs"] = max(search.scope_size, 1)
            tail = search.cfg.candidates - search.lexical_limit
            if tail > 0:
                params["tail"] = tail
            stmt = scope_statement(search.where.shape, cosines, tail > 0)
        else:
            read_together = together(search.n_docs, budget)
            if read_together:
                params["named"] = [n.lower() for n in search.names]
            stmt = statement(search.where.shape, cosines, budget, search.rarest, read_together)
        return await execute(conn, stmt, params)

    async def hits(self, cur: RowCursor | None, search: Search) -> list[Hit]:
        return (await self.hits_and_tail(cur, search))[0]

    async def hits_and_tail(self, cur: RowCursor | None, search: Search) -> tuple[list[Hit], list[Hit]]:
        """The hits, and the rows of the ranking's tail (``_WITH_TAIL``: their ids and scores alone), each
        best first."""
        if cur is None:
            return [], []
        found = await read_hits(cur)
        found.sort(key=lambda h: (-h.score, h.id))  # the cosine join may reorder them
        rows: list[Hit] = []
        tail: list[Hit] = []
        for h in found:
            (rows if h.row.kind is not None else tail).append(h)  # the tail's rows read no memory
        return rows, tail


def found_by_dense(tail: list[Hit], dense_lists: dict[str, list[Hit]]) -> list[Hit]:
    """The lexical tail's hits (``_WITH_TAIL``) whose memories the dense side found, each with the
    dense row (its fields and cosines) and its own term share; their ranks follow the lexical hits'."""
    rows = {h.id: h.row for hits in dense_lists.values() for h in hits}
    return [Hit(t.id, t.score, rows[t.id]._replace(term_share=t.row.term_share)) for t in tail if t.id in rows]


RETRIEVER = Lexical()
