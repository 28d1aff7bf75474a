"""The review UI's reads: a tenant's counts, its recent recalls' latency and outcomes, its queues, and the
relations of a memory (inside ``Database.tenant``)."""

from __future__ import annotations

import uuid
from typing import Any, LiteralString

from engram.model.recall import Relation
from engram.store.database import Conn

COUNTS: LiteralString = "SELECT kind, status, count(*) AS n FROM memories WHERE tenant_id = %s GROUP BY kind, status"
RECALLS: LiteralString = """
SELECT count(*) AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
       avg((abstained OR jsonb_array_length(selected) = 0)::int) AS empty,
       avg(degraded::int) AS degraded
  FROM recall_receipts WHERE tenant_id = %s AND created_at > now() - interval '24 hours'
"""
QUEUES: LiteralString = """
SELECT (SELECT count(*) FROM embedding_jobs WHERE tenant_id = %(t)s) AS embedding,
       (SELECT count(*) FROM outbox_actions WHERE tenant_id = %(t)s AND status = 'pending') AS outbox,
       (SELECT count(*) FROM outbox_actions WHERE tenant_id = %(t)s AND status = 'dead') AS outbox_dead
"""
RELATIONS: LiteralString = """
SELECT id, src_id, dst_id, type, weight, metadata, created_at FROM relations
 WHERE tenant_id = %(t)s AND (src_id = %(m)s OR dst_id = %(m)s) ORDER BY created_at LIMIT 200
"""


async def counts(conn: Conn, tenant_id: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in await (await conn.execute(COUNTS, [tenant_id])).fetchall():
        out.setdefault(r["kind"], {})[r["status"]] = int(r["n"])
    return out


async def recalls(conn: Conn, tenant_id: str) -> dict[str, Any]:
    row = await (await conn.execute(RECALLS, [tenant_id])).fetchone()
    return dict(row) if row else {"n": 0}


async def queues(conn: Conn, tenant_id: str) -> dict[str, int]:
    row = await (await conn.execute(QUEUES, {"t": tenant_id})).fetchone()
    return {k: int(v) for k, v in (row or {}).items()}


async def relations_of(conn: Conn, tenant_id: str, memory_id: uuid.UUID) -> list[Relation]:
    rows = await (await conn.execute(RELATIONS, {"t": tenant_id, "m": memory_id})).fetchall()
    return [Relation.model_validate(r) for r in rows]
