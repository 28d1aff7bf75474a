"""How deep the background queues are and how old their oldest job is, across tenants (inside
``Database.queue``): what /metrics reports, without a tenant in sight."""

from __future__ import annotations

from typing import LiteralString

from engram.store.database import Conn

STATS: LiteralString = """
SELECT 'embedding' AS queue, count(*) AS depth, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS age
  FROM embedding_jobs
UNION ALL
SELECT 'outbox', count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)
  FROM outbox_actions WHERE status = 'pending'
UNION ALL
SELECT 'outbox_dead', count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)
  FROM outbox_actions WHERE status = 'dead'
"""


async def stats(conn: Conn) -> dict[str, dict[str, float]]:
    rows = await (await conn.execute(STATS)).fetchall()
    return {r["queue"]: {"depth": float(r["depth"]), "oldest_age_seconds": float(r["age"])} for r in rows}
