"""The receipts' retention (SPEC 5.6, 6.3): a tenant's recall receipts older than its policy keeps, counted or
deleted a batch at a time (each batch its own transaction, so a large backlog holds no long locks), oldest
first, through the index on their time (migration 0027)."""

from __future__ import annotations

from datetime import datetime
from typing import LiteralString

from engram.store.database import Conn

COUNT_OLD: LiteralString = "SELECT count(*) AS n FROM recall_receipts WHERE tenant_id = %s AND created_at < %s"
DELETE_OLD: LiteralString = """
DELETE FROM recall_receipts
 WHERE tenant_id = %(tenant_id)s
   AND id IN (SELECT id FROM recall_receipts
               WHERE tenant_id = %(tenant_id)s AND created_at < %(before)s
               ORDER BY created_at LIMIT %(limit)s)
"""


async def count_old(conn: Conn, tenant_id: str, before: datetime) -> int:
    row = await (await conn.execute(COUNT_OLD, [tenant_id, before])).fetchone()
    return int(row["n"]) if row else 0


async def delete_old(conn: Conn, tenant_id: str, before: datetime, limit: int) -> int:
    """Delete up to ``limit`` of the oldest receipts created before ``before``; how many were."""
    cur = await conn.execute(DELETE_OLD, {"tenant_id": tenant_id, "before": before, "limit": limit})
    return cur.rowcount
