"""The outbox (migration 0017): actions written with their memory, leased across tenants by workers
(``db.queue``: ids only), read and settled under each tenant's row-level security."""

from __future__ import annotations

import uuid
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

COLUMNS: LiteralString = (
    "id, idempotency_key, request_hash, handler, target, payload, memory_id, user_id, agent_id, workflow_id, "
    "status, attempts, max_attempts, next_attempt_at, leased_until, leased_by, last_error, result, "
    "outcome_memory_id, created_at, finished_at"
)

INSERT: LiteralString = """
INSERT INTO outbox_actions (tenant_id, id, idempotency_key, request_hash, handler, target, payload, memory_id,
                            user_id, agent_id, workflow_id, status, max_attempts, next_attempt_at, created_at)
VALUES (%(tenant_id)s, %(id)s, %(key)s, %(hash)s, %(handler)s, %(target)s, %(payload)s, %(memory_id)s,
        %(user_id)s, %(agent_id)s, %(workflow_id)s, 'pending', %(max_attempts)s, now(), now())
ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
RETURNING """ + COLUMNS  # fmt: skip

BY_KEY: LiteralString = "SELECT " + COLUMNS + " FROM outbox_actions WHERE tenant_id = %s AND idempotency_key = %s"
BY_ID: LiteralString = "SELECT " + COLUMNS + " FROM outbox_actions WHERE tenant_id = %s AND id = %s"
LIST: LiteralString = (
    "SELECT " + COLUMNS + " FROM outbox_actions WHERE tenant_id = %(tenant_id)s"
    " AND (%(status)s::text IS NULL OR status = %(status)s) AND (%(before)s::uuid IS NULL OR id < %(before)s)"
    " ORDER BY id DESC LIMIT %(limit)s"
)

# Due actions of every tenant, oldest due first, each leased to one worker: a leased row is skipped by the
# others, and a lease that runs out (its worker died) makes the row due again. The attempt is counted when
# it is leased, so a worker killed mid-dispatch still uses one up.
LEASE: LiteralString = """
WITH due AS (
    SELECT tenant_id, id FROM outbox_actions
     WHERE status = 'pending' AND next_attempt_at <= now() AND (leased_until IS NULL OR leased_until <= now())
     ORDER BY next_attempt_at
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
)
UPDATE outbox_actions o
   SET leased_until = now() + make_interval(secs => %(lease)s), leased_by = %(worker)s, attempts = o.attempts + 1
  FROM due
 WHERE o.tenant_id = due.tenant_id AND o.id = due.id
RETURNING o.tenant_id, o.id
"""
NEXT_DUE: LiteralString = """
SELECT extract(epoch FROM min(greatest(next_attempt_at, coalesce(leased_until, next_attempt_at))) - now()) AS wait
  FROM outbox_actions WHERE status = 'pending'
"""

# Settling an action: only by the worker holding its lease (a worker whose lease ran out lost it).
DONE: LiteralString = (
    "UPDATE outbox_actions SET status = 'done', result = %(result)s, outcome_memory_id = %(memory)s,"
    " finished_at = now(), leased_until = NULL, last_error = NULL"
    " WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND leased_by = %(worker)s AND status = 'pending'"
    " RETURNING " + COLUMNS
)
DEAD: LiteralString = (
    "UPDATE outbox_actions SET status = 'dead', result = %(result)s, last_error = %(error)s,"
    " outcome_memory_id = %(memory)s, finished_at = now(), leased_until = NULL"
    " WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND leased_by = %(worker)s AND status = 'pending'"
    " RETURNING " + COLUMNS
)
RETRY_LATER: LiteralString = (
    "UPDATE outbox_actions SET next_attempt_at = now() + make_interval(secs => %(delay)s), leased_until = NULL,"
    " last_error = %(error)s, result = %(result)s"
    " WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND leased_by = %(worker)s AND status = 'pending'"
    " RETURNING " + COLUMNS
)
# A worker still carrying an action out keeps its lease (so that a slow dispatch is not sent again).
RENEW: LiteralString = (
    "UPDATE outbox_actions SET leased_until = now() + make_interval(secs => %(lease)s)"
    " WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND leased_by = %(worker)s AND status = 'pending'"
)
# A dead action sent again by a reviewer: its attempts start over.
REVIVE: LiteralString = (
    "UPDATE outbox_actions SET status = 'pending', attempts = 0, next_attempt_at = now(), leased_until = NULL,"
    " leased_by = NULL, finished_at = NULL WHERE tenant_id = %s AND id = %s AND status = 'dead' RETURNING " + COLUMNS
)
WAKE: LiteralString = "SELECT pg_notify('engram_outbox', '')"


async def insert(conn: Conn, tenant_id: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The new action's row, or None when its key is taken (then read it ``by_key``)."""
    await conn.execute(ENSURE_TENANT, [tenant_id])
    cur = await conn.execute(INSERT, {**params, "tenant_id": tenant_id, "payload": Jsonb(params["payload"])})
    return await cur.fetchone()


async def by_key(conn: Conn, tenant_id: str, key: str) -> dict[str, Any] | None:
    return await (await conn.execute(BY_KEY, [tenant_id, key])).fetchone()


async def by_id(conn: Conn, tenant_id: str, action_id: uuid.UUID) -> dict[str, Any] | None:
    return await (await conn.execute(BY_ID, [tenant_id, action_id])).fetchone()


async def page(
    conn: Conn, tenant_id: str, *, status: str | None, before: uuid.UUID | None, limit: int
) -> list[dict[str, Any]]:
    params = {"tenant_id": tenant_id, "status": status, "before": before, "limit": limit}
    return await (await conn.execute(LIST, params)).fetchall()


async def lease(conn: Conn, *, worker: str, limit: int, lease_seconds: float) -> list[tuple[str, uuid.UUID]]:
    rows = await (await conn.execute(LEASE, {"worker": worker, "limit": limit, "lease": lease_seconds})).fetchall()
    return [(r["tenant_id"], r["id"]) for r in rows]


async def next_due(conn: Conn) -> float | None:
    """Seconds until the next pending action is due (negative when overdue), None when none is pending."""
    row = await (await conn.execute(NEXT_DUE)).fetchone()
    return None if row is None or row["wait"] is None else float(row["wait"])


async def settle(
    conn: Conn, stmt: LiteralString, tenant_id: str, action_id: uuid.UUID, worker: str, **values: Any
) -> dict[str, Any] | None:
    """Apply DONE, DEAD or RETRY_LATER; None when the lease was lost."""
    params = {"tenant_id": tenant_id, "id": action_id, "worker": worker, "memory": None, "error": None, **values}
    params["result"] = Jsonb(params.get("result"))
    return await (await conn.execute(stmt, params)).fetchone()


async def renew(conn: Conn, tenant_id: str, action_id: uuid.UUID, worker: str, lease_seconds: float) -> None:
    await conn.execute(RENEW, {"tenant_id": tenant_id, "id": action_id, "worker": worker, "lease": lease_seconds})


async def revive(conn: Conn, tenant_id: str, action_id: uuid.UUID) -> dict[str, Any] | None:
    row = await (await conn.execute(REVIVE, [tenant_id, action_id])).fetchone()
    if row is not None:
        await conn.execute(WAKE)
    return row
