"""Decay's statements (SPEC 6.3): the tenant's active memories in batches with what decay looks at, the tool
results a newer result from the same source replaced, and the archive and expire updates (each a revision;
the caller journals them)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

BATCH: LiteralString = """
SELECT id, kind, subtype, confidence, importance, recorded_at, updated_at, last_used_at, contains_pii,
       retention_reason, expires_at
  FROM memories
 WHERE tenant_id = %s AND status = 'active' AND id > %s
 ORDER BY id
 LIMIT %s
"""
# Tool results of a source that has a newer active result in the same scope.
REPLACED_TOOL_RESULTS: LiteralString = """
SELECT m.id FROM memories m
 WHERE m.tenant_id = %(tenant_id)s AND m.status = 'active' AND m.source_type = 'tool_result'
   AND m.source_ref IS NOT NULL AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
   AND EXISTS (SELECT 1 FROM memories n
                WHERE n.tenant_id = m.tenant_id AND n.scope_key = m.scope_key AND n.source_type = 'tool_result'
                  AND n.source_ref = m.source_ref AND n.status = 'active' AND n.recorded_at > m.recorded_at)
"""
ARCHIVE: LiteralString = """
UPDATE memories SET status = 'archived', archived_at = now(), revision = revision + 1, updated_at = now()
 WHERE tenant_id = %s AND id = ANY(%s) AND status = 'active'
RETURNING id
"""
EXPIRE: LiteralString = """
UPDATE memories SET expires_at = %s, revision = revision + 1, updated_at = now()
 WHERE tenant_id = %s AND id = ANY(%s) AND status = 'active' AND (expires_at IS NULL OR expires_at > %s)
RETURNING id
"""
GET_POLICY: LiteralString = "SELECT settings -> 'lifecycle' AS policy FROM tenants WHERE tenant_id = %s"
SET_POLICY: LiteralString = (
    "UPDATE tenants SET settings = jsonb_set(settings, '{lifecycle}', %s::jsonb) WHERE tenant_id = %s"
)


async def batch(conn: Conn, tenant_id: str, after: uuid.UUID, limit: int) -> list[dict[str, Any]]:
    return list(await (await conn.execute(BATCH, [tenant_id, after, limit])).fetchall())


async def replaced_tool_results(conn: Conn, tenant_id: str, now: datetime) -> set[uuid.UUID]:
    rows = await (await conn.execute(REPLACED_TOOL_RESULTS, {"tenant_id": tenant_id, "now": now})).fetchall()
    return {r["id"] for r in rows}


async def archive(conn: Conn, tenant_id: str, ids: list[uuid.UUID]) -> list[uuid.UUID]:
    return [r["id"] for r in await (await conn.execute(ARCHIVE, [tenant_id, ids])).fetchall()]


async def expire(conn: Conn, tenant_id: str, ids: list[uuid.UUID], at: datetime) -> list[uuid.UUID]:
    return [r["id"] for r in await (await conn.execute(EXPIRE, [at, tenant_id, ids, at])).fetchall()]


async def policy(conn: Conn, tenant_id: str) -> dict[str, Any] | None:
    row = await (await conn.execute(GET_POLICY, [tenant_id])).fetchone()
    return row["policy"] if row and row["policy"] is not None else None


async def set_policy(conn: Conn, tenant_id: str, value: dict[str, Any]) -> None:
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(SET_POLICY, [Jsonb(value), tenant_id])
