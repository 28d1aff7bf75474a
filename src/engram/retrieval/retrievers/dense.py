"""The dense retrievers: the nearest memories by the cosine of their own vector (``SELF``) or their context
vector (``CONTEXT``), through pgvector HNSW per model (and per large tenant), or exactly over a small scope."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import LiteralString

from psycopg import sql

from engram.retrieval.filter import Filter, filter_clause, scope_window, visible
from engram.retrieval.retrievers.base import Hit, Search
from engram.retrieval.retrievers.columns import CANDIDATE_COLUMNS, COSINE, COSINE_PAIR, RowCursor, execute, read_hits
from engram.store.database import Conn

# What both dense statements select, and from where. The caller's visibility is checked on the vector's
# copy of its memory's fields too, so the scan drops what the caller may not see before the lookup.
_DENSE_FROM: LiteralString = (
    "SELECT e.memory_id AS id, {score} AS score, {cos_self} AS cos_self, {cos_context} AS cos_context, {columns}"
    " FROM memory_embeddings e JOIN memories m ON m.tenant_id = e.tenant_id AND m.id = e.memory_id"
)
_VISIBLE_VECTOR: LiteralString = visible("e")


def _cosine(column: str) -> sql.Composable:
    return sql.SQL(COSINE).format(sql.Identifier(column))


def _parts(column: str, dims: int) -> dict[str, sql.Composable]:
    return {
        "score": _cosine(column),
        "cos_self": _cosine("embedding"),
        "cos_context": _cosine("context_embedding"),
        "columns": sql.SQL(CANDIDATE_COLUMNS),
        "col": sql.Identifier(column),
        "dims": sql.Literal(dims),
    }


def statement(model_id: str, dims: int, column: str, f: Filter, *, limit: int, own_index: bool = False) -> bytes:
    """Model, tenant and limit as literals: the planner can then pick the partial HNSW index built for this
    model (and tenant), and judges a prepared statement's generic plan by the real limit (with an unknown
    one it finds the generic plan dearer and plans every execution again).
    A tenant with an index of its own (``store.embeddings.index_large_tenants``) is ordered by halfvec
    inner product, which only that index serves (vectors are unit length: the same order as cosine); the
    score is the cosine (``columns.COSINE``). Each row also carries both cosines."""
    return _planned(model_id, dims, column, f.params["tenant_id"], f.shape, limit, own_index)


@functools.lru_cache(maxsize=4096)
def _planned(
    model_id: str, dims: int, column: str, tenant_id: str, shape: tuple[str, ...], limit: int, own_index: bool
) -> bytes:
    kind = "halfvec" if own_index else "vector"
    return sql.SQL(
        _DENSE_FROM + " WHERE e.tenant_id = {tenant} AND e.model_id = {model} AND " + _VISIBLE_VECTOR
        + " AND {filter} ORDER BY e.{col}::{kind}({dims}) {order} %(qv)s::{kind}({dims}) LIMIT {limit}"
    ).format(
        **_parts(column, dims), kind=sql.SQL(kind), order=sql.SQL("<#>" if own_index else "<=>"),
        model=sql.Literal(model_id), filter=filter_clause(shape), tenant=sql.Literal(tenant_id),
        limit=sql.Literal(limit),
    ).as_bytes()  # fmt: skip


# A small scope's vectors (``retrieval.scope``): its owners' and the shared ones, each scored exactly. The
# owners' vectors are read from the scope's own index of them (migration 0023: index-only, a user's vectors
# together) when they fit it (``{compact}``, see ``fits_compact``); the owner implies the caller's
# visibility there, so only the shared vectors are checked against their copy of it. The memories (and,
# where the tenant has context vectors, the rows of the vectors) are looked up only for the best
# ``{window}``, the filter applied there: when at least ``{limit}`` pass, they are exactly the top of the
# filtered ranking; only when too few pass are the rest looked up (as the lexical statement does).
_SCOPE: LiteralString = """
WITH near AS MATERIALIZED (
    SELECT e.memory_id AS id, {score} AS score
      FROM memory_embeddings e
     WHERE e.tenant_id = %(tenant_id)s AND e.model_id = {model} AND e.{vec} IS NOT NULL
       AND e.scope_owner = ANY(%(owners)s){compact}
     UNION ALL
    SELECT e.memory_id, {score}
      FROM memory_embeddings e
     WHERE e.tenant_id = %(tenant_id)s AND e.model_id = {model} AND e.{vec} IS NOT NULL
       AND e.scope_owner IS NULL AND {visible}
), best AS MATERIALIZED (
    SELECT * FROM near ORDER BY score DESC, id LIMIT {window}
), passed AS MATERIALIZED (
    SELECT b.id, b.score, {cosines}, {columns}
      FROM best b JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = b.id{vectors}
     WHERE {filter}
)
SELECT * FROM passed
UNION ALL
SELECT b.id, b.score, {cosines}, {columns}
  FROM near b JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = b.id{vectors}
 WHERE (SELECT count(*) FROM passed) < {limit} AND (SELECT count(*) FROM near) > {window}
   AND b.id NOT IN (SELECT id FROM best) AND {filter}
 ORDER BY score DESC, id
 LIMIT {limit}
"""
FILTERED_WINDOW = 2  # with an optional filter part, the memories looked up first (``filter.scope_window``)
_VECTOR_ROW: LiteralString = (
    " JOIN memory_embeddings e ON e.tenant_id = %(tenant_id)s AND e.memory_id = b.id AND e.model_id = {model}"
)
# The predicate of the scope's vector index (migration 0023), which bounds its entries' size.
_COMPACT_BYTES: LiteralString = "2400"
COMPACT_BYTES = int(_COMPACT_BYTES)
_COMPACT: LiteralString = (
    " AND octet_length(e.scope_owner) + octet_length(e.model_id) + 4 * vector_dims(e.embedding) <= " + _COMPACT_BYTES
)


def fits_compact(model_id: str, dims: int, owners: Sequence[str]) -> bool:
    """Whether the scope's vector index holds every vector of these owners in this model (its predicate)."""
    fixed = len(model_id.encode()) + 4 * dims
    return all(len(o.encode()) + fixed <= COMPACT_BYTES for o in owners)


@functools.lru_cache(maxsize=64)
def scope_statement(
    model_id: str, column: str, shape: tuple[str, ...], limit: int, *, compact: bool, context: bool
) -> bytes:
    """A small scope's dense candidates, scored exactly (``_SCOPE``). The statement names neither tenant
    nor owners, so one prepared plan serves every small scope: the scope indexes decide the rows. With
    ``compact`` the owners' vectors come from the scope's vector index (``fits_compact``); with
    ``context`` (the tenant has context vectors) the rows carry both cosines, read for the window only."""
    own = column == "embedding"
    cosines: sql.Composable
    vectors: sql.Composable
    if own and not context:  # no context vectors: the score is the memory's own cosine, the other is NULL
        cosines, vectors = sql.SQL("b.score AS cos_self, NULL::float8 AS cos_context"), sql.SQL("")
    else:
        cosines = sql.SQL(COSINE_PAIR)
        vectors = sql.SQL(_VECTOR_ROW).format(model=sql.Literal(model_id))
    return sql.SQL(_SCOPE).format(
        score=_cosine(column), vec=sql.Identifier(column), model=sql.Literal(model_id),
        compact=sql.SQL(_COMPACT if compact and own else ""), visible=sql.SQL(_VISIBLE_VECTOR),
        cosines=cosines, vectors=vectors, columns=sql.SQL(CANDIDATE_COLUMNS), filter=filter_clause(shape),
        window=sql.Literal(scope_window(limit, shape, FILTERED_WINDOW)), limit=sql.Literal(limit),
    ).as_bytes()  # fmt: skip


# A scope with one large owner (``retrieval.scope``, plan owner-index): that owner's vectors through its own
# HNSW index (``store.scope_indexes``: tenant, model and owner as literals, the owner also in the index's
# IS TRUE form, so that the planner matches the partial index; halfvec inner product, which only such
# indexes serve). The rest of the scope (the shared memories and any other owner's) is a small scope of its
# own, read by ``scope_statement``, whose one plan serves every owner; the best of both is kept. Apart, the
# statement planned for each owner (on each connection) holds memory_embeddings once, not twice.
_OWNER: LiteralString = (
    _DENSE_FROM + " WHERE e.tenant_id = {tenant} AND e.model_id = {model} AND e.scope_owner = {owner}"
    " AND (e.scope_owner = {owner}) IS TRUE AND e.{col} IS NOT NULL AND "
    + _VISIBLE_VECTOR
    + " AND {filter} ORDER BY e.{col}::halfvec({dims}) <#> %(qv)s::halfvec({dims}) LIMIT {limit}"
)


# The planner multiplies the selectivities of the owner (twice: the IS TRUE form too) and of the visibility
# rule, which the owner implies (about 100 rows where there are 10,000), and would sort them all: the
# owner's own index is what this plan was chosen for (2 ms against 60 at a million memories). Sorting is
# turned off for this statement alone (planned once per connection, under these settings), then set back
# to PostgreSQL's default for what follows in the transaction.
_SORT_OFF = b"SELECT set_config('enable_sort', 'off', true)"
_SORT_ON = b"SELECT set_config('enable_sort', 'on', true)"


@functools.lru_cache(maxsize=1024)
def owner_statement(
    model_id: str, dims: int, column: str, tenant_id: str, owner: str, shape: tuple[str, ...], limit: int
) -> bytes:
    """``_OWNER`` for one owner: its part of the scope alone."""
    return sql.SQL(_OWNER).format(
        **_parts(column, dims), model=sql.Literal(model_id), tenant=sql.Literal(tenant_id),
        owner=sql.Literal(owner), filter=filter_clause(shape), limit=sql.Literal(limit),
    ).as_bytes()  # fmt: skip


class Dense:
    """The nearest memories by cosine: exactly over a small scope (``scope_statement``); otherwise through
    the tenant's own HNSW index, or the model's shared one, filtered. Prepared at its first use on a
    connection (see ``gather.recall_settings``)."""

    def __init__(self, name: str, column: str) -> None:
        self.name = name
        self.column = column

    async def send(self, conn: Conn, search: Search) -> tuple[RowCursor, ...]:
        """Send the statements (one, or two for a large owner's scope); ``hits`` reads their rows."""
        assert search.vector is not None and search.model_id is not None
        f, limit = search.where, search.dense_limit
        params = {**f.params, "qv": search.vector}
        if search.scope or search.index_owner is not None:
            owner = search.index_owner
            others = [o for o in f.params["owners"] if o != owner]
            compact = fits_compact(search.model_id, search.dims, others)
            rest = scope_statement(
                search.model_id, self.column, f.shape, limit, compact=compact, context=search.context
            )
            sent = [await execute(conn, rest, {**params, "owners": others}, prepare=True)]
            if owner is not None:
                stmt = owner_statement(search.model_id, search.dims, self.column, f.params["tenant_id"], owner,
                                       f.shape, limit)  # fmt: skip
                await conn.execute(_SORT_OFF)
                sent.append(await execute(conn, stmt, params, prepare=True))
                await conn.execute(_SORT_ON)
            return tuple(sent)
        stmt = statement(search.model_id, search.dims, self.column, f, limit=limit, own_index=search.own_index)
        return (await execute(conn, stmt, params, prepare=True),)

    async def hits(self, sent: tuple[RowCursor, ...] | None, search: Search) -> list[Hit]:
        """The best ``Search.dense_limit`` of what ``send`` sent, by score."""
        if not sent:
            return []
        found = [h for cur in sent for h in await read_hits(cur)]
        # relaxed_order iterative scans may return slightly out of order; a large owner's two reads merge here
        found.sort(key=lambda h: (-h.score, h.id))
        return found[: search.dense_limit]


SELF = Dense("dense", "embedding")
CONTEXT = Dense("dense_context", "context_embedding")
