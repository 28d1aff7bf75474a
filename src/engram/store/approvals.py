"""The approval queue (SPEC 4.5): memories held for approval or quarantined, oldest first, and the reviewer's
decision on one (inside ``Database.tenant``)."""

from __future__ import annotations

import uuid
from typing import Any, LiteralString

from psycopg import sql

from engram.model import Memory
from engram.model.access import Acting
from engram.store.database import Conn
from engram.store.listing import acting_conditions, decode_cursor, encode_cursor
from engram.store.memories import MEMORY_COLUMNS

AWAITING: tuple[str, ...] = ("pending_approval", "quarantined")

SET_STATUS: LiteralString = (
    "UPDATE memories SET status = %s, revision = revision + 1, updated_at = now()"
    " WHERE tenant_id = %s AND id = %s RETURNING " + MEMORY_COLUMNS
)


async def review_page(
    conn: Conn,
    tenant_id: str,
    *,
    statuses: tuple[str, ...],
    limit: int,
    cursor: str | None,
    acting: Acting | None = None,
) -> tuple[list[Memory], str | None]:
    """Memories awaiting review, oldest first (memories_awaiting_review); with ``acting``, only those
    visible acting so."""
    conds: list[sql.Composable] = [sql.SQL("tenant_id = %(tenant_id)s AND status = ANY(%(statuses)s)")]
    params: dict[str, Any] = {"tenant_id": tenant_id, "statuses": list(statuses), "limit": limit + 1}
    if cursor:
        conds.append(sql.SQL("id > %(cursor)s"))
        params["cursor"] = decode_cursor(cursor)
    if acting is not None:
        conds += acting_conditions(acting, params)
    query = sql.SQL("SELECT {} FROM memories WHERE {} ORDER BY id LIMIT %(limit)s").format(
        sql.SQL(MEMORY_COLUMNS), sql.SQL(" AND ").join(conds)
    )
    rows = await (await conn.execute(query, params)).fetchall()
    items = [Memory.from_row(r) for r in rows[:limit]]
    return items, encode_cursor(items[-1].id) if len(rows) > limit and items else None


async def set_status(conn: Conn, tenant_id: str, mem_id: uuid.UUID, status: str) -> Memory:
    row = await (await conn.execute(SET_STATUS, [status, tenant_id, mem_id])).fetchone()
    assert row is not None, "the row was locked FOR UPDATE before"
    return Memory.from_row(row)
