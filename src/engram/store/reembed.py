"""Embedding model migrations (migration 0020): the open migration, the queue of memories still lacking the new
model's vector, the switch, and the removal of the old model's vectors and indexes."""

from __future__ import annotations

import uuid
from typing import Any, LiteralString

from psycopg import AsyncConnection, sql
from psycopg.rows import DictRow

from engram.store.database import Conn
from engram.store.embeddings import index_name

OPEN: LiteralString = "SELECT * FROM embedding_migrations WHERE state <> 'done'"
LATEST_FROM: LiteralString = """
SELECT * FROM embedding_migrations WHERE from_model = %s AND state <> 'building' ORDER BY started_at DESC LIMIT 1
"""
START: LiteralString = """
INSERT INTO embedding_migrations (id, from_model, to_model, to_spec, state) VALUES (%s, %s, %s, %s, 'building')
RETURNING *
"""
# One tenant's memories without a vector of the new model, queued (idempotent: resuming queues nothing twice).
ENQUEUE: LiteralString = """
INSERT INTO embedding_jobs (tenant_id, memory_id, model_id)
SELECT m.tenant_id, m.id, %(model)s FROM memories m
 WHERE m.tenant_id = %(tenant_id)s
   AND NOT EXISTS (SELECT 1 FROM memory_embeddings e
                    WHERE e.tenant_id = m.tenant_id AND e.memory_id = m.id AND e.model_id = %(model)s)
ON CONFLICT (tenant_id, memory_id, model_id) DO NOTHING
"""
# Inside ``Database.queue``: leases a dead run left behind are due again (only while this run holds the lock).
RELEASE: LiteralString = "UPDATE embedding_jobs SET not_before = now() WHERE model_id = %s AND not_before > now()"
REMAINING: LiteralString = """
SELECT count(*) AS queued, count(*) FILTER (WHERE attempts >= 5) AS failing, max(last_error) AS last_error
  FROM embedding_jobs WHERE model_id = %s
"""
TENANTS: LiteralString = "SELECT tenant_id FROM tenants ORDER BY tenant_id"  # inside ``Database.queue``
MISSING: LiteralString = """
SELECT count(*) AS n FROM memories m
 WHERE m.tenant_id = %(tenant_id)s
   AND NOT EXISTS (SELECT 1 FROM memory_embeddings e
                    WHERE e.tenant_id = m.tenant_id AND e.memory_id = m.id AND e.model_id = %(model)s)
"""
AS_TENANT: LiteralString = "SELECT set_config('engram.tenant_id', %s, true)"
LOCK_TABLE: LiteralString = "LOCK TABLE memories IN SHARE MODE"  # no write slips in between the count and the switch
SWITCH: LiteralString = (
    "UPDATE embedding_migrations SET state = 'switched', switched_at = now() WHERE id = %s AND state = 'building'"
)
DROP_TENANT_VECTORS: LiteralString = """
DELETE FROM memory_embeddings WHERE tenant_id = %(tenant_id)s AND model_id = %(model)s AND memory_id = ANY(ARRAY(
    SELECT memory_id FROM memory_embeddings WHERE tenant_id = %(tenant_id)s AND model_id = %(model)s LIMIT %(batch)s))
"""
DROP_JOBS: LiteralString = "DELETE FROM embedding_jobs WHERE model_id = %s"  # inside ``Database.queue``
OLD_INDEXES: LiteralString = """
SELECT indexname FROM pg_indexes WHERE tablename = 'memory_embeddings' AND starts_with(indexname, %s)
"""
FINISH: LiteralString = """
UPDATE embedding_migrations SET state = 'done', finished_at = now() WHERE id = %s AND state = 'switched'
"""
# One run at a time (a session lock, held by the run's own connection: it goes when the run dies).
TRY_RUN_LOCK: LiteralString = "SELECT pg_try_advisory_lock(hashtextextended('engram.reembed', 0)) AS got"


async def open_migration(conn: Conn) -> dict[str, Any] | None:
    return await (await conn.execute(OPEN)).fetchone()


async def switched_from(conn: Conn, model_id: str) -> dict[str, Any] | None:
    """The latest migration away from ``model_id`` that switched reads (or finished)."""
    return await (await conn.execute(LATEST_FROM, [model_id])).fetchone()


async def start(conn: Conn, from_model: str, to_model: str, spec: str) -> dict[str, Any]:
    row = await (await conn.execute(START, [uuid.uuid4(), from_model, to_model, spec])).fetchone()
    assert row is not None
    return row


async def enqueue(conn: Conn, tenant_id: str, model_id: str) -> int:
    return (await conn.execute(ENQUEUE, {"tenant_id": tenant_id, "model": model_id})).rowcount


async def release(conn: Conn, model_id: str) -> None:
    await conn.execute(RELEASE, [model_id])


async def remaining(conn: Conn, model_id: str) -> dict[str, Any]:
    """Jobs of the new model still queued (inside ``Database.queue``), those failing, and an error of theirs."""
    row = await (await conn.execute(REMAINING, [model_id])).fetchone()
    assert row is not None
    return {"queued": int(row["queued"]), "failing": int(row["failing"]), "last_error": row["last_error"]}


async def tenant_ids(conn: Conn) -> list[str]:
    return [r["tenant_id"] for r in await (await conn.execute(TENANTS)).fetchall()]


async def switch(conn: Conn, migration_id: uuid.UUID, model_id: str, tenants: list[str]) -> int:
    """In the caller's transaction (owner): with writes to memories held off, count every tenant's memories
    lacking the new model's vector (under that tenant's policies); switch reads when there are none. Returns
    how many are missing."""
    await conn.execute(LOCK_TABLE)
    missing = 0
    for tenant_id in tenants:
        await conn.execute(AS_TENANT, [tenant_id])
        row = await (await conn.execute(MISSING, {"tenant_id": tenant_id, "model": model_id})).fetchone()
        missing += int(row["n"]) if row else 0
    if missing == 0:
        await conn.execute(SWITCH, [migration_id])
    return missing


async def drop_tenant_vectors(conn: Conn, tenant_id: str, model_id: str, batch: int) -> int:
    params = {"tenant_id": tenant_id, "model": model_id, "batch": batch}
    return (await conn.execute(DROP_TENANT_VECTORS, params)).rowcount


async def drop_jobs(conn: Conn, model_id: str) -> None:
    await conn.execute(DROP_JOBS, [model_id])


async def drop_indexes(conn: AsyncConnection[DictRow], model_id: str) -> list[str]:
    """Drop every index of the old model (the shared one, tenants' and owners'), CONCURRENTLY (autocommit)."""
    names = [r["indexname"] for r in await (await conn.execute(OLD_INDEXES, [index_name(model_id)])).fetchall()]
    for name in names:
        await conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
    return names


async def finish(conn: Conn, migration_id: uuid.UUID) -> None:
    await conn.execute(FINISH, [migration_id])


async def try_run_lock(conn: Conn) -> bool:
    row = await (await conn.execute(TRY_RUN_LOCK)).fetchone()
    return bool(row and row["got"])
