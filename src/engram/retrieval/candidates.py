"""Candidate queries. Every one starts from the same filter (``filter``, SPEC 5.1), inside the query,
before ranking.

Every statement here asks for binary results: psycopg loads binary floats, uuids and timestamps faster than
it parses their text (A/B on the bench: p95 -0.8 ms).
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from typing import Any, LiteralString

from psycopg import sql

from engram.retrieval.config import RetrievalConfig
from engram.retrieval.filter import Filter, filter_clause
from engram.retrieval.filter import visible as visibility
from engram.retrieval.query import escape_identifier
from engram.store.database import Conn, Cursor


@dataclass
class Hit:
    """One candidate of one retriever. ``row`` holds what fusion needs (``CANDIDATE_COLUMNS``, and the query's
    cosines ``cos_self``/``cos_context`` when the statement had the query vector), read by the candidate
    query itself so that no second statement has to look the candidates up again."""

    id: uuid.UUID
    score: float
    row: dict[str, Any] = field(default_factory=dict)


# What fusion, the utility score and the packet need of every candidate, read by the candidate statements
# themselves (they visit the memory's row for the filter anyway): no statement has to look the winners up
# again after fusion. Content longer than INLINE_CONTENT bytes comes back NULL (150 candidates of 12,000
# characters would be megabytes); ``contents`` reads it for the few that can enter the packet.
_INLINE_CONTENT: LiteralString = "2000"
INLINE_CONTENT = int(_INLINE_CONTENT)
CANDIDATE_COLUMNS: LiteralString = (
    "m.speaker, m.session_id, m.valid_from, m.confidence, m.importance, m.summary, m.kind, m.source_type,"
    " m.source_ref, m.recorded_at, m.require_citation, m.fact_key,"
    " CASE WHEN octet_length(m.content) <= " + _INLINE_CONTENT + " THEN m.content END AS content"
)

# Wraps a candidate statement (alias ``h``, columns id, score, CANDIDATE_COLUMNS) to add the query's cosines
# to the memory's own and context vectors, when the query vector is known.
_WITH_COSINES: LiteralString = """
SELECT h.*, (1 - (e.embedding <=> %(qv)s))::float8 AS cos_self,
       (1 - (e.context_embedding <=> %(qv)s))::float8 AS cos_context
  FROM ({inner}) h
  LEFT JOIN memory_embeddings e ON e.tenant_id = %(tenant_id)s AND e.memory_id = h.id AND e.model_id = %(model_id)s
"""


def _cosine_params(params: dict[str, Any], vector: Any, model_id: str | None) -> bool:
    """Add the query vector to ``params`` if there is one: the statement then reads the cosines too."""
    if vector is None or model_id is None:
        return False
    params["qv"] = vector
    params["model_id"] = model_id
    return True


def _finish(inner: sql.Composed, cosines: bool) -> bytes:
    """A composed candidate statement, with the cosine columns if asked, as bytes for the caches."""
    return (sql.SQL(_WITH_COSINES).format(inner=inner) if cosines else inner).as_bytes()


def _hits(rows: list[dict[str, Any]]) -> list[Hit]:
    return [Hit(r["id"], float(r["score"]), r) for r in rows]


# --- lexical: BM25F over the weighted search key ----------------------------------------------------------

# BM25F over the postings of the query's kept lexemes (see ``keep_lexemes``), scored from the postings
# index alone (it carries each document's tf and length). The filter is applied inside the same statement,
# to the best ``window`` documents first: when at least ``limit`` of them pass, they are exactly the top
# ``limit`` of the filtered ranking (every document outside the window scores no higher than every one
# inside it). Only when too few pass, and there are more scored documents, does the second branch filter
# the rest; it is skipped otherwise. The result is the same as filtering every document before ranking,
# while a large tenant visits a few hundred memories instead of thousands. Each row also carries its
# ``term_share``: the share of the query's idf weight that the memory holds, over the lexemes read that the
# tenant knows (a word no memory holds cannot tell one memory from another), which recall's relevance floor
# asks of a memory found by words alone.
LEXICAL: LiteralString = """
WITH {terms} post AS MATERIALIZED (
    SELECT p.lexeme, p.memory_id, p.tf, p.dl
      FROM search_postings p
     WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = ANY({lexemes})
), idf AS MATERIALIZED (
    SELECT lexeme, ln((greatest(%(n_docs)s::float8, count(*)) - count(*) + 0.5) / (count(*) + 0.5) + 1) AS w
      FROM post GROUP BY lexeme
), scored AS MATERIALIZED (
    SELECT p.memory_id AS id,
           sum(i.w * p.tf * (%(k1)s::float8 + 1)
               / (p.tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * p.dl / %(avgdl)s::float8))) AS score,
           sum(i.w) / (SELECT sum(w) FROM idf) AS term_share
      FROM post p JOIN idf i ON i.lexeme = p.lexeme
     GROUP BY p.memory_id
), best AS MATERIALIZED (
    SELECT id, score, term_share FROM scored ORDER BY score DESC, id LIMIT %(window)s
), passed AS MATERIALIZED (
    SELECT b.id, b.score, b.term_share, {columns}
      FROM best b JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = b.id
     WHERE {filter}
)
SELECT * FROM passed
UNION ALL
SELECT s.id, s.score, s.term_share, {columns}
  FROM scored s JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = s.id
 WHERE (SELECT count(*) FROM passed) < %(limit)s AND (SELECT count(*) FROM scored) > %(window)s
   AND s.id NOT IN (SELECT id FROM best) AND {filter}
 ORDER BY score DESC, id
 LIMIT %(limit)s
"""
LEXICAL_WINDOW = 4  # the window is this many times the candidates wanted
IDENTIFIER_WINDOW = 2  # memories verified through the postings, as a multiple of the candidates wanted

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

# Those terms and which of them are read (``keep_lexemes``, in SQL): prefixed to LEXICAL, so the lexical side is
# one statement. (``query_terms`` and ``keep_lexemes`` are the same choice in Python: what the tests check it by,
# and ``lexical``'s path for callers that pass the lexemes.)
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


# Which share of the names a query mentions (their lexemes) no memory of the tenant holds: a question about
# someone or something the tenant never mentioned (recall abstains unless something is close in meaning).
UNKNOWN_NAMES: LiteralString = """
SELECT (count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM search_postings p
                                            WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = u.lexeme)))::float8
       / nullif(count(*), 0) AS unknown
  FROM unnest(tsvector_to_array(to_tsvector(%(fts)s::regconfig, %(names)s))) AS u(lexeme)
"""


async def send_unknown_names(conn: Conn, tenant_id: str, fts: str, names: list[str]) -> Cursor | None:
    if not names:
        return None
    params = {"tenant_id": tenant_id, "fts": fts, "names": " ".join(names)}
    return await conn.execute(UNKNOWN_NAMES, params, binary=True)


async def unknown_names(cur: Cursor | None) -> float | None:
    """The share of the query's names unknown to the tenant (None: the query names nothing)."""
    row = await cur.fetchone() if cur is not None else None
    return float(row["unknown"]) if row and row["unknown"] is not None else None


async def query_terms(conn: Conn, tenant_id: str, fts: str, query: str, cap: int) -> dict[str, int]:
    """The query's lexemes and how many of the tenant's documents hold each (at most ``cap``)."""
    params = {"tenant_id": tenant_id, "fts": fts, "query": query}
    rows = await (await conn.execute(_query_terms_sql(cap), params, binary=True)).fetchall()
    return {r["lexeme"]: int(r["n"]) for r in rows}


@functools.lru_cache(maxsize=16)
def _query_terms_sql(cap: int) -> bytes:
    return sql.SQL(QUERY_TERMS).format(cap=sql.Literal(cap)).as_bytes()  # a literal: see dense_statement


def keep_lexemes(dfs: dict[str, int], budget: int, *, rarest: bool = True) -> dict[str, int]:
    """The rarest lexemes whose postings fit the budget; with ``rarest``, at least the rarest one even if it
    does not fit.

    ``dfs`` may be capped (``query_terms``): it only decides what to read; the query counts the exact
    document frequencies of what it reads. A lexeme left out is so common in this tenant that its idf is
    small: it acts as a stop word here. Small corpora keep every lexeme (exact BM25F); large ones stay fast.
    Without ``rarest`` a query made only of such lexemes keeps none (recall does so when dense retrievers
    answer beside it: reading thousands of postings of a near stop word cost a large tenant 5-14 ms).
    """
    kept: dict[str, int] = {}
    used = 0
    for lexeme, n in sorted(dfs.items(), key=lambda kv: (kv[1], kv[0])):
        if (kept or not rarest) and used + n > budget:
            break
        kept[lexeme] = n
        used += n
    return kept


async def lexical(
    conn: Conn,
    f: Filter,
    dfs: dict[str, int] | None,
    cfg: RetrievalConfig,
    *,
    n_docs: int,
    avgdl: float,
    query: str = "",
    fts: str = "english",
    vector: Any = None,
    model_id: str | None = None,
    rarest: bool = True,
) -> list[Hit]:
    """BM25F candidates; with ``vector``, their rows carry the query's cosines too. ``dfs`` are the query's
    lexemes (``query_terms``); without them the statement finds and chooses them itself from ``query``.
    ``rarest``: read the rarest lexeme even when it is over the postings budget (``keep_lexemes``)."""
    cur = await send_lexical(conn, f, dfs, cfg, n_docs=n_docs, avgdl=avgdl, query=query, fts=fts, vector=vector,
                             model_id=model_id, rarest=rarest)  # fmt: skip
    return await lexical_hits(cur)


async def send_lexical(
    conn: Conn,
    f: Filter,
    dfs: dict[str, int] | None,
    cfg: RetrievalConfig,
    *,
    n_docs: int,
    avgdl: float,
    query: str = "",
    fts: str = "english",
    vector: Any = None,
    model_id: str | None = None,
    rarest: bool = True,
) -> Cursor | None:
    """``lexical``'s statement, sent (None: no lexeme to read); ``lexical_hits`` reads its rows."""
    params: dict[str, Any] = {
        **f.params,
        "n_docs": n_docs,
        "avgdl": max(avgdl, 1e-6),
        "k1": cfg.bm25_k1,
        "b": cfg.bm25_b,
        "limit": cfg.candidates,
        "window": cfg.candidates * LEXICAL_WINDOW,
    }
    if dfs is None:
        params.update(query=query, fts=fts)
    else:
        kept = keep_lexemes(dfs, cfg.lexical_postings_budget, rarest=rarest)
        if not kept:
            return None
        params["lexemes"] = list(kept)
    budget = cfg.lexical_postings_budget if dfs is None else None
    stmt = _lexical_sql(f.shape, _cosine_params(params, vector, model_id), budget, rarest)
    return await conn.execute(stmt, params, binary=True)


async def lexical_hits(cur: Cursor | None) -> list[Hit]:
    if cur is None:
        return []
    hits = _hits(await cur.fetchall())
    hits.sort(key=lambda h: (-h.score, h.id))  # the cosine join may reorder them
    return hits


@functools.lru_cache(maxsize=256)
def _lexical_sql(shape: tuple[str, ...], cosines: bool, budget: int | None, rarest: bool = True) -> bytes:
    """LEXICAL for a filter shape; with ``budget``, choosing its lexemes itself (``_KEPT_TERMS``)."""
    terms: sql.Composable
    if budget is None:
        terms, lexemes = sql.SQL(""), sql.SQL("%(lexemes)s::text[]")
    else:
        terms = sql.SQL(_KEPT_TERMS).format(
            cap=sql.Literal(budget + 1), budget=sql.Literal(budget), rarest=sql.Literal(rarest)
        )
        lexemes = sql.SQL("ARRAY(SELECT lexeme FROM kept)")
    inner = sql.SQL(LEXICAL).format(
        terms=terms, lexemes=lexemes, filter=filter_clause(shape), columns=sql.SQL(CANDIDATE_COLUMNS)
    )
    return _finish(inner, cosines)


# --- dense: pgvector HNSW per model, iterative scans keep filtered recall ---------------------------------


def dense_statement(model_id: str, dims: int, column: str, f: Filter, *, limit: int, own_index: bool = False) -> bytes:
    """Model and tenant as literals: the planner can then pick the partial HNSW index built for this model.
    The limit too: with it a parameter, PostgreSQL judges a prepared statement's generic plan by an unknown
    limit, finds it dearer than the custom one, and plans every execution again (0.5 ms each).
    A tenant with an index of its own (``store.embeddings.index_large_tenants``) is ordered by halfvec
    inner product, which only that index serves (vectors are unit length: the same order as cosine); the
    score is the full-precision cosine. Each row also carries the fusion columns and both cosines."""
    return _dense_sql(model_id, dims, column, f.params["tenant_id"], f.shape, limit, own_index)


# The caller's visibility on the vector's copy of its memory's fields: the dense statements drop the
# vectors the caller may not see before looking their memories up.
_EMBEDDING_VISIBLE: LiteralString = visibility("e")


# What both dense statements select, and from where.
_DENSE_FROM: LiteralString = (
    "SELECT e.memory_id AS id, {score} AS score, {cos_self} AS cos_self, {cos_context} AS cos_context, {columns}"
    " FROM memory_embeddings e JOIN memories m ON m.tenant_id = e.tenant_id AND m.id = e.memory_id"
)


def _dense_parts(column: str, dims: int) -> dict[str, sql.Composable]:
    cosine = "(1 - (e.{}::vector({}) <=> %(qv)s::vector({})))::float8"
    return {
        "score": sql.SQL(cosine).format(sql.Identifier(column), dims, dims),
        "cos_self": sql.SQL(cosine).format(sql.Identifier("embedding"), dims, dims),
        "cos_context": sql.SQL(cosine).format(sql.Identifier("context_embedding"), dims, dims),
        "columns": sql.SQL(CANDIDATE_COLUMNS),
        "col": sql.Identifier(column),
        "dims": sql.Literal(dims),
    }


@functools.lru_cache(maxsize=4096)
def _dense_sql(
    model_id: str, dims: int, column: str, tenant_id: str, shape: tuple[str, ...], limit: int, own_index: bool
) -> bytes:
    kind = "halfvec" if own_index else "vector"
    return sql.SQL(
        _DENSE_FROM + " WHERE e.tenant_id = {tenant} AND e.model_id = {model} AND " + _EMBEDDING_VISIBLE
        + " AND {filter} ORDER BY e.{col}::{kind}({dims}) {order} %(qv)s::{kind}({dims}) LIMIT {limit}"
    ).format(
        **_dense_parts(column, dims), kind=sql.SQL(kind), order=sql.SQL("<#>" if own_index else "<=>"),
        model=sql.Literal(model_id), filter=filter_clause(shape), tenant=sql.Literal(tenant_id),
        limit=sql.Literal(limit),
    ).as_bytes()  # fmt: skip


# A small tenant's dense candidates: exact, by a statement that does not name the tenant, so one prepared
# plan can serve every small tenant (a statement naming it is planned again for each: 0.5 ms; PostgreSQL
# still plans per tenant when the shared plan would cost more, as when one huge tenant skews the estimate).
# Ordered by the score, which no index can serve: a small tenant is read through its own rows, never the graph.
@functools.lru_cache(maxsize=64)
def _exact_sql(model_id: str, dims: int, column: str, shape: tuple[str, ...], limit: int) -> bytes:
    return sql.SQL(
        _DENSE_FROM + " WHERE e.tenant_id = %(tenant_id)s AND e.model_id = {model} AND e.{col} IS NOT NULL AND "
        + _EMBEDDING_VISIBLE + " AND {filter} ORDER BY score DESC, id LIMIT {limit}"
    ).format(
        **_dense_parts(column, dims), model=sql.Literal(model_id), filter=filter_clause(shape),
        limit=sql.Literal(limit),
    ).as_bytes()  # fmt: skip


async def dense(
    conn: Conn,
    f: Filter,
    vector: Any,
    cfg: RetrievalConfig,
    *,
    model_id: str,
    dims: int,
    context: bool,
    own_index: bool = False,
    exact: bool = False,
) -> list[Hit]:
    """The nearest memories by cosine. ``exact`` for small tenants (see ``_exact_sql``); otherwise through
    the tenant's own HNSW index, or the planner's choice of the shared one or the tenant's rows."""
    cur = await send_dense(
        conn, f, vector, cfg, model_id=model_id, dims=dims, context=context, own_index=own_index, exact=exact
    )
    return await dense_hits(cur)


async def send_dense(
    conn: Conn,
    f: Filter,
    vector: Any,
    cfg: RetrievalConfig,
    *,
    model_id: str,
    dims: int,
    context: bool,
    own_index: bool = False,
    exact: bool = False,
) -> Cursor:
    """``dense``'s statement, sent: in pipeline mode its rows can come back with the closing Sync (``dense_hits``).
    Prepared at its first use on a connection (see ``engine.dense_settings``)."""
    column = "context_embedding" if context else "embedding"
    if exact:
        stmt = _exact_sql(model_id, dims, column, f.shape, cfg.candidates)
    else:
        stmt = dense_statement(model_id, dims, column, f, limit=cfg.candidates, own_index=own_index)
    return await conn.execute(stmt, {**f.params, "qv": vector}, binary=True, prepare=True)


async def dense_hits(cur: Cursor) -> list[Hit]:
    hits = _hits([r for r in await cur.fetchall() if r["score"] is not None])
    hits.sort(key=lambda h: -h.score)  # relaxed_order iterative scans may return slightly out of order
    return hits


# --- identifiers: exact token matches through the postings or the trigram index -----------------------------

# One statement, whose cost is bounded by the indexes and the window, never memories x identifiers. An
# identifier that is a lexeme of the tenant's search keys (most are: 504, inv-2024-0042, econnreset) finds
# its candidates through the postings, rarest first within the postings budget like lexical terms: one in
# thousands of memories ("30") tells them apart no better than a common word; one over the budget is not
# read at all. An identifier that is no lexeme of the tenant (ERR_504, a quoted phrase) goes through the
# trigram index. Either way only the memories that pass the filter are taken, best first up to a window (by
# how many of the identifiers their postings hold; trigram matches as found), and only those are searched:
# a memory counts only if its own content holds an identifier as a whole token (not its date or its
# neighbours); its score is how many of the branch's identifiers it holds (a memory can be in both
# branches: ``identifier_rows`` adds its scores up). One search per identifier and memory, which stops at
# the first occurrence.
# (``body``: the content detoasted once for all the searches, not once for each.)
_MATCHED: LiteralString = "(SELECT count(*)::float8 FROM {branch} i WHERE m.body ~* i.pattern)"
IDENTIFIERS: LiteralString = """
WITH ids AS MATERIALIZED (
    SELECT i.lexeme, i.alt, '(?:^|[^[:alnum:]])(' || i.alt || ')(?=$|[^[:alnum:]])' AS pattern,
           (SELECT count(*) FROM (SELECT 1 FROM search_postings p
                                   WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = i.lexeme LIMIT {cap}) x) AS n
      FROM unnest(%(lexemes)s::text[], %(alts)s::text[]) AS i(lexeme, alt)
), read AS MATERIALIZED (
    SELECT lexeme, pattern
      FROM (SELECT lexeme, pattern, sum(n) OVER w AS used FROM ids WHERE n BETWEEN 1 AND {budget}
             WINDOW w AS (ORDER BY n, lexeme COLLATE "C" ROWS UNBOUNDED PRECEDING)) t
     WHERE used <= {budget}
), others AS MATERIALIZED (
    SELECT alt, pattern FROM ids WHERE n = 0
), by_postings AS (
    SELECT m.id, {matched_read} AS score, {columns}
      FROM (SELECT m.*, m.content || '' AS body
              FROM (SELECT memory_id, count(*) AS k FROM search_postings
                     WHERE tenant_id = %(tenant_id)s AND lexeme = ANY(ARRAY(SELECT lexeme FROM read)) AND tf >= 1
                     GROUP BY memory_id) c
              JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = c.memory_id
             WHERE {filter}
             ORDER BY c.k DESC, m.recorded_at DESC
             LIMIT %(window)s) m
), by_trigrams AS (
    SELECT m.id, {matched_others} AS score, {columns}
      FROM (SELECT m.*, m.content || '' AS body FROM memories m
             WHERE EXISTS (SELECT 1 FROM others) AND {filter}
               AND m.content ~* (SELECT '(?:^|[^[:alnum:]])(' || string_agg(alt, '|') || ')(?=$|[^[:alnum:]])'
                                   FROM others)
             LIMIT %(limit)s) m
)
SELECT * FROM (SELECT * FROM by_postings WHERE score > 0 ORDER BY score DESC, recorded_at DESC LIMIT %(limit)s) a
UNION ALL
SELECT * FROM (SELECT * FROM by_trigrams WHERE score > 0 ORDER BY score DESC, recorded_at DESC LIMIT %(limit)s) b
"""


async def identifier_hits(
    conn: Conn, f: Filter, idents: list[str], cfg: RetrievalConfig, *, vector: Any = None, model_id: str | None = None
) -> list[Hit]:
    """Memories containing the identifiers as whole tokens (in their own text, not their neighbours');
    score = share of the identifiers matched (``IDENTIFIERS``)."""
    return await identifier_rows(await send_identifiers(conn, f, idents, cfg, vector=vector, model_id=model_id),
                                 len(idents), cfg.candidates)  # fmt: skip


async def send_identifiers(
    conn: Conn, f: Filter, idents: list[str], cfg: RetrievalConfig, *, vector: Any = None, model_id: str | None = None
) -> Cursor:
    """``identifier_hits``' statement, sent; ``identifier_rows`` reads it."""
    params = {
        **f.params,
        "lexemes": [i.lower() for i in idents],
        "alts": [escape_identifier(i) for i in idents],
        "limit": cfg.candidates,
        "window": cfg.candidates * IDENTIFIER_WINDOW,
    }
    stmt = _identifiers_sql(f.shape, _cosine_params(params, vector, model_id), cfg.lexical_postings_budget)
    return await conn.execute(stmt, params, binary=True)


@functools.lru_cache(maxsize=256)
def _identifiers_sql(shape: tuple[str, ...], cosines: bool, budget: int) -> bytes:
    inner = sql.SQL(IDENTIFIERS).format(
        filter=filter_clause(shape), columns=sql.SQL(CANDIDATE_COLUMNS), cap=sql.Literal(budget + 1),
        budget=sql.Literal(budget),
        matched_read=sql.SQL(_MATCHED).format(branch=sql.SQL("read")),
        matched_others=sql.SQL(_MATCHED).format(branch=sql.SQL("others")),
    )  # fmt: skip
    return _finish(inner, cosines)


async def identifier_rows(cur: Cursor, n_idents: int, limit: int) -> list[Hit]:
    found: dict[uuid.UUID, Hit] = {}
    for hit in _hits(await cur.fetchall()):
        if hit.id in found:  # found by both branches: the identifiers it matched add up
            found[hit.id].score += hit.score
        else:
            found[hit.id] = hit
    ranked = sorted(found.values(), key=lambda h: (-h.score, h.id))[:limit]
    for hit in ranked:
        hit.score /= n_idents
    return ranked


# --- details of the candidate union ------------------------------------------------------------------------

# Id arrays go in binary (``%(ids)b``): as text, psycopg and the server spend about 1 ms on 200 uuids.
DETAILS: LiteralString = (
    "SELECT m.id, " + CANDIDATE_COLUMNS + " FROM memories m WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY(%(ids)b)"
)

CONTENTS: LiteralString = (
    "SELECT m.id, m.content FROM memories m WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY(%(ids)b)"
)

COSINES: LiteralString = """
SELECT e.memory_id AS id, (1 - (e.embedding <=> %(qv)s))::float8 AS cos_self,
       (1 - (e.context_embedding <=> %(qv)s))::float8 AS cos_context
  FROM memory_embeddings e
 WHERE e.tenant_id = %(tenant_id)s AND e.model_id = %(model_id)s AND e.memory_id = ANY(%(ids)b)
"""

RELATED: LiteralString = """
SELECT r.src_id, r.dst_id, r.type, r.weight FROM relations r
 WHERE r.tenant_id = %(tenant_id)s AND (r.src_id = ANY(%(ids)b) OR r.dst_id = ANY(%(ids)b))
"""

# Pairs of these memories that a relation says contradict each other.
CONTRADICTIONS: LiteralString = """
SELECT r.src_id, r.dst_id FROM relations r
 WHERE r.tenant_id = %(tenant_id)s AND r.type = 'contradicts' AND r.src_id = ANY(%(ids)b) AND r.dst_id = ANY(%(ids)b)
"""

VISIBLE_IDS: LiteralString = "SELECT m.id FROM memories m WHERE {filter} AND m.id = ANY(%(ids)b)"


async def contradictions(conn: Conn, tenant_id: str, ids: list[uuid.UUID]) -> set[frozenset[uuid.UUID]]:
    """The pairs of these memories a ``contradicts`` relation joins."""
    cur = await conn.execute(CONTRADICTIONS, {"tenant_id": tenant_id, "ids": ids}, binary=True)
    return {frozenset((r["src_id"], r["dst_id"])) for r in await cur.fetchall()}


async def details(
    conn: Conn, tenant_id: str, ids: list[uuid.UUID], vector: Any, model_id: str | None
) -> dict[uuid.UUID, dict[str, Any]]:
    """Fusion columns and (with a query vector) cosines of memories no candidate query has read."""
    if not ids:
        return {}
    rows = await (await conn.execute(DETAILS, {"tenant_id": tenant_id, "ids": ids}, binary=True)).fetchall()
    out = {r["id"]: r for r in rows}
    if vector is not None and model_id is not None:
        await add_cosines(conn, tenant_id, list(out.values()), vector, model_id)
    return out


async def add_cosines(conn: Conn, tenant_id: str, rows: list[dict[str, Any]], vector: Any, model_id: str) -> None:
    """Set ``cos_self``/``cos_context`` on rows read before the query vector was known (None: no vector)."""
    await set_cosines(await send_cosines(conn, tenant_id, rows, vector, model_id), rows)


async def send_cosines(
    conn: Conn, tenant_id: str, rows: list[dict[str, Any]], vector: Any, model_id: str
) -> Cursor | None:
    """``add_cosines``' statement, sent (in pipeline mode its rows can come back with the closing Sync)."""
    if not rows:
        return None
    params = {"tenant_id": tenant_id, "ids": list({r["id"] for r in rows}), "qv": vector, "model_id": model_id}
    return await conn.execute(COSINES, params, binary=True)


async def set_cosines(cur: Cursor | None, rows: list[dict[str, Any]]) -> None:
    if cur is None:
        return
    found = {r["id"]: r for r in await cur.fetchall()}
    for row in rows:
        hit = found.get(row["id"])
        row["cos_self"] = hit["cos_self"] if hit else None
        row["cos_context"] = hit["cos_context"] if hit else None


async def contents(conn: Conn, tenant_id: str, ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The content of memories whose candidate row left it out (longer than ``INLINE_CONTENT``)."""
    if not ids:
        return {}
    rows = await (await conn.execute(CONTENTS, {"tenant_id": tenant_id, "ids": ids}, binary=True)).fetchall()
    return {r["id"]: r["content"] for r in rows}


async def visible(conn: Conn, f: Filter, ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these ids pass the filter (for relation expansion, which must not bypass it)."""
    if not ids:
        return set()
    stmt = sql.SQL(VISIBLE_IDS).format(filter=f.clause)
    rows = await (await conn.execute(stmt, {**f.params, "ids": ids}, binary=True)).fetchall()
    return {r["id"] for r in rows}
