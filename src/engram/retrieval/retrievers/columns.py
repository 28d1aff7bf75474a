"""What every candidate statement reads, and how its rows become ``Row``s.

Every statement here asks for binary results: psycopg loads binary floats, uuids and timestamps faster than
it parses their text.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any, LiteralString

from psycopg import AsyncCursor, sql
from psycopg.rows import RowMaker

from engram.retrieval.retrievers.base import Hit, Row
from engram.store.database import Conn

RowCursor = AsyncCursor[Row]

# The candidate statements visit the memory's row for the filter anyway, so they read what ranking and the
# packet need of it too. Content longer than INLINE_CONTENT bytes comes back NULL (150 candidates of 12,000
# characters would be megabytes); ``followups.contents`` reads it for the few that can enter the packet.
_INLINE_CONTENT: LiteralString = "2000"
INLINE_CONTENT = int(_INLINE_CONTENT)
CANDIDATE_COLUMNS: LiteralString = (
    "m.speaker, m.session_id, m.valid_from, m.confidence, m.importance, m.summary, m.kind, m.source_type,"
    " m.source_ref, m.recorded_at, m.require_citation, m.fact_key,"
    " CASE WHEN octet_length(m.content) <= " + _INLINE_CONTENT + " THEN m.content END AS content"
)

# CANDIDATE_COLUMNS as NULLs: a row that read no memory (the fields between ``id`` and ``score``).
CANDIDATE_NULLS: LiteralString = "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
assert CANDIDATE_NULLS.count("NULL") == CANDIDATE_COLUMNS.count(",") + 1 == Row._fields.index("score") - 1

# The query's cosine to a vector (``e.{}``): its inner product, as stored vectors and the query's are unit
# length (``EmbeddingGateway``, ``Engram.recall``). An exact scan of a user's 1,000 vectors costs 40% less
# so than with ``<=>`` (docs/retrieval.md). Every statement takes it so, so that a memory's cosine is the
# same number whichever statement read it.
COSINE: LiteralString = "inner_product(e.{}, %(qv)s)"
# The query's cosines to a memory's own and context vectors (its ``memory_embeddings`` row, alias ``e``),
# when the query vector is known; COSINE_COLUMNS appends them to a select list.
COSINE_PAIR: LiteralString = (
    COSINE.format("embedding") + " AS cos_self, " + COSINE.format("context_embedding") + " AS cos_context"
)
COSINE_COLUMNS: LiteralString = ", " + COSINE_PAIR
NO_COSINES: LiteralString = ", NULL::float8 AS cos_self, NULL::float8 AS cos_context"  # a row without them
VECTOR_JOIN: LiteralString = (
    " LEFT JOIN memory_embeddings e ON e.tenant_id = %(tenant_id)s AND e.memory_id = h.id AND e.model_id = %(model_id)s"
)
# Wraps a candidate statement (alias ``h``: id, score, CANDIDATE_COLUMNS) to add those cosines.
_WITH_COSINES: LiteralString = "SELECT h.*" + COSINE_COLUMNS + " FROM ({inner}) h" + VECTOR_JOIN


def cosine_params(params: dict[str, Any], vector: Any, model_id: str | None) -> bool:
    """Add the query vector to ``params`` if there is one: the statement then reads the cosines too."""
    if vector is None or model_id is None:
        return False
    params["qv"] = vector
    params["model_id"] = model_id
    return True


def finish(inner: sql.Composed, cosines: bool) -> bytes:
    """A composed candidate statement, with the cosine columns if asked, as bytes for the statement caches."""
    return compact((sql.SQL(_WITH_COSINES).format(inner=inner) if cosines else inner).as_bytes())


# A string literal (kept as it is), or a run of whitespace and comments.
_LAYOUT = re.compile(rb"('(?:[^']|'')*')|(?:\s|--[^\n]*)+")


def compact(statement: bytes) -> bytes:
    """``statement`` without its comments and its layout's whitespace (string literals untouched). psycopg
    caches a statement's conversion (its ``%(name)s`` placeholders into ``$n``) only up to 4,096 bytes: a small
    scope's lexical statement, laid out to be read, was over it with any optional filter part and was
    converted again at every recall. (The dense statements, built elsewhere, are well under it.)"""
    return _LAYOUT.sub(lambda m: m.group(1) or b" ", statement).strip()


def candidate_rows(cursor: AsyncCursor[Any]) -> RowMaker[Row]:
    """The row factory of the candidate statements: each row a ``Row``. The statement's columns are matched
    to the fields once per result (``class_row`` matches them by name in a dict for every row); a field the
    statement does not read takes its default, and ``scored`` says whether it read the query's cosines."""
    res = cursor.pgresult  # its field names: ``description`` builds a Column object for each
    names = [(res.fname(i) or b"").decode() for i in range(res.nfields)] if res is not None else []
    at = {name: i for i, name in enumerate(names)}
    missing = [f for f in Row._fields if f not in at]
    extra = tuple(("cos_self" in at) if f == "scored" else Row._field_defaults[f] for f in missing)
    at.update((f, len(names) + i) for i, f in enumerate(missing))
    pick = itemgetter(*(at[f] for f in Row._fields))

    def make(values: Any) -> Row:
        return Row._make(pick(values + extra))

    return make


async def execute(conn: Conn, stmt: bytes, params: Any, *, prepare: bool | None = None) -> RowCursor:
    """Run (or, in pipeline mode, send) a candidate statement whose rows are ``Row``s, in binary."""
    cur = conn.cursor(row_factory=candidate_rows)
    return await cur.execute(stmt, params, binary=True, prepare=prepare)


async def read_hits(cur: RowCursor) -> list[Hit]:
    """The statement's rows as hits, in the order read (rows without a score left out)."""
    return [Hit(r.id, r.score, r) for r in await cur.fetchall() if r.score is not None]
