"""A recall's reads besides the candidate statements: whether the query's names are known, cosines of rows
read before the query vector was, and what ranking and the packet may need of the candidates (their
relations and the memories those lead to, their vectors, contradictions between them, long contents).

Each ``send_*`` sends its statement and returns it ``Pending``: in pipeline mode several travel in one round
trip, and each is read when its value is wanted. Id arrays go in binary (``%(ids)b``): their text is slow
to write and to parse.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Generic, LiteralString, TypeVar

import numpy as np
from psycopg import AsyncCursor, sql
from psycopg.rows import class_row

from engram.retrieval.filter import Filter, filter_clause
from engram.retrieval.retrievers.base import Cosines, Relation, Row
from engram.retrieval.retrievers.columns import CANDIDATE_COLUMNS, COSINE_COLUMNS, execute
from engram.store.database import Conn

T = TypeVar("T")

# Which share of the names a query mentions (their lexemes) no memory of the tenant holds: a question about
# someone or something the tenant never mentioned (recall abstains unless something is close in meaning).
UNKNOWN_NAMES: LiteralString = """
SELECT (count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM search_postings p
                                            WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = u.lexeme)))::float8
       / nullif(count(*), 0) AS unknown
  FROM unnest(tsvector_to_array(to_tsvector(%(fts)s::regconfig, %(names)s))) AS u(lexeme)
"""

COSINES: LiteralString = (
    "SELECT e.memory_id AS id" + COSINE_COLUMNS + " FROM memory_embeddings e"
    " WHERE e.tenant_id = %(tenant_id)s AND e.model_id = %(model_id)s AND e.memory_id = ANY(%(ids)b)"
)

RELATED: LiteralString = """
SELECT r.src_id, r.dst_id, r.type, r.weight FROM relations r
 WHERE r.tenant_id = %(tenant_id)s AND (r.src_id = ANY(%(ids)b) OR r.dst_id = ANY(%(ids)b))
"""

# Those of these memories that pass the filter (expansion must not bypass it), as candidate rows.
NEIGHBOURS: LiteralString = (
    "SELECT m.id, " + CANDIDATE_COLUMNS + " FROM memories m WHERE {filter} AND m.id = ANY(%(ids)b)"
)

# Pairs of these memories that a relation says contradict each other.
CONTRADICTIONS: LiteralString = """
SELECT r.src_id, r.dst_id FROM relations r
 WHERE r.tenant_id = %(tenant_id)s AND r.type = 'contradicts' AND r.src_id = ANY(%(ids)b) AND r.dst_id = ANY(%(ids)b)
"""

VECTORS: LiteralString = (
    "SELECT memory_id, embedding FROM memory_embeddings"
    " WHERE tenant_id = %(tenant_id)s AND model_id = %(model_id)s AND memory_id = ANY(%(ids)b)"
)

CONTENTS: LiteralString = (
    "SELECT m.id, m.content FROM memories m WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY(%(ids)b)"
)


class Pending(Generic[T]):
    """A statement sent (or nothing to send: ``cur`` None), read into its value when that is wanted."""

    __slots__ = ("_cur", "_read")

    def __init__(self, cur: AsyncCursor[Any] | None, read: Callable[[list[Any]], T]) -> None:
        self._cur, self._read = cur, read

    async def value(self) -> T:
        return self._read(await self._cur.fetchall() if self._cur is not None else [])


async def send_unknown_names(conn: Conn, tenant_id: str, fts: str, names: Sequence[str]) -> Pending[float | None]:
    """The share of the query's names unknown to the tenant (None: the query names nothing)."""

    def read(rows: list[Any]) -> float | None:
        return float(rows[0]["unknown"]) if rows and rows[0]["unknown"] is not None else None

    if not names:
        return Pending(None, read)
    params = {"tenant_id": tenant_id, "fts": fts, "names": " ".join(names)}
    return Pending(await conn.execute(UNKNOWN_NAMES, params, binary=True), read)


async def send_cosines(
    conn: Conn, tenant_id: str, ids: Sequence[uuid.UUID], vector: Any, model_id: str | None
) -> Pending[dict[uuid.UUID, Cosines]]:
    """The query's cosines of memories whose rows were read before the query vector was known: one for
    every id (None for a vector the memory lacks; none at all without a vector)."""

    def read(rows: list[Any]) -> dict[uuid.UUID, Cosines]:
        found = {r["id"]: (r["cos_self"], r["cos_context"]) for r in rows}
        return {i: found.get(i, (None, None)) for i in ids}

    if not ids or vector is None or model_id is None:
        return Pending(None, lambda rows: {})
    params = {"tenant_id": tenant_id, "ids": list(ids), "qv": vector, "model_id": model_id}
    return Pending(await conn.execute(COSINES, params, binary=True), read)


async def send_relations(conn: Conn, tenant_id: str, ids: Sequence[uuid.UUID]) -> Pending[list[Relation]]:
    """The relations that have one of these memories at either end."""
    cur = conn.cursor(row_factory=class_row(Relation))
    await cur.execute(RELATED, {"tenant_id": tenant_id, "ids": list(ids)}, binary=True)
    return Pending(cur, list)


@functools.lru_cache(maxsize=64)
def _neighbours_sql(shape: tuple[str, ...]) -> bytes:
    return sql.SQL(NEIGHBOURS).format(filter=filter_clause(shape)).as_bytes()


async def send_neighbours(conn: Conn, f: Filter, ids: Sequence[uuid.UUID]) -> Pending[dict[uuid.UUID, Row]]:
    """The rows of those of these memories that pass the filter."""

    def read(rows: list[Row]) -> dict[uuid.UUID, Row]:
        return {r.id: r for r in rows}

    if not ids:
        return Pending(None, read)
    cur = await execute(conn, _neighbours_sql(f.shape), {**f.params, "ids": list(ids)})
    return Pending(cur, read)


async def send_contradictions(
    conn: Conn, tenant_id: str, ids: Sequence[uuid.UUID]
) -> Pending[set[frozenset[uuid.UUID]]]:
    """The pairs of these memories a ``contradicts`` relation joins."""

    def read(rows: list[Any]) -> set[frozenset[uuid.UUID]]:
        return {frozenset((r["src_id"], r["dst_id"])) for r in rows}

    cur = await conn.execute(CONTRADICTIONS, {"tenant_id": tenant_id, "ids": list(ids)}, binary=True)
    return Pending(cur, read)


async def send_vectors(
    conn: Conn, tenant_id: str, ids: Sequence[uuid.UUID], model_id: str | None
) -> Pending[dict[uuid.UUID, np.ndarray[Any, Any]]]:
    """These memories' own vectors of the model (for MMR; none without a model)."""

    def read(rows: list[Any]) -> dict[uuid.UUID, np.ndarray[Any, Any]]:
        return {r["memory_id"]: r["embedding"].to_numpy() for r in rows}

    if not ids or model_id is None:
        return Pending(None, read)
    return Pending(await conn.execute(VECTORS, {"tenant_id": tenant_id, "model_id": model_id, "ids": list(ids)}), read)


async def contents(conn: Conn, tenant_id: str, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The content of memories whose candidate row left it out (longer than ``columns.INLINE_CONTENT``)."""
    if not ids:
        return {}
    rows = await (await conn.execute(CONTENTS, {"tenant_id": tenant_id, "ids": list(ids)}, binary=True)).fetchall()
    return {r["id"]: r["content"] for r in rows}
