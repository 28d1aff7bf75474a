"""The periodic jobs' rows (migration 0019), across tenants inside ``Database.queue``: every tenant gets a
row per job, due rows are leased with SKIP LOCKED, and a run is settled with its outcome and next time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.store.database import Conn

ENSURE: LiteralString = """
INSERT INTO scheduled_runs (tenant_id, job, next_run_at)
SELECT t.tenant_id, j.job, now() FROM tenants t CROSS JOIN unnest(%s::text[]) AS j(job)
ON CONFLICT (tenant_id, job) DO NOTHING
"""
CLAIM: LiteralString = """
WITH due AS (
    SELECT tenant_id, job FROM scheduled_runs
     WHERE job = ANY(%(jobs)s) AND next_run_at <= now() AND (leased_until IS NULL OR leased_until < now())
     ORDER BY next_run_at
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
)
UPDATE scheduled_runs r
   SET leased_until = now() + make_interval(secs => %(lease)s), leased_by = %(by)s, last_started_at = now()
  FROM due
 WHERE r.tenant_id = due.tenant_id AND r.job = due.job
RETURNING r.tenant_id, r.job
"""
SETTLE: LiteralString = """
UPDATE scheduled_runs
   SET leased_until = NULL, leased_by = NULL, runs = runs + 1, last_finished_at = now(),
       next_run_at = now() + make_interval(secs => %(every)s), last_result = %(result)s, last_error = %(error)s
 WHERE tenant_id = %(tenant_id)s AND job = %(job)s AND leased_by = %(by)s
"""
RELEASE: LiteralString = """
UPDATE scheduled_runs SET leased_until = NULL, leased_by = NULL
 WHERE (tenant_id, job) IN (SELECT * FROM unnest(%(tenants)s::text[], %(jobs)s::text[])) AND leased_by = %(by)s
"""
DUE_NOW: LiteralString = "UPDATE scheduled_runs SET next_run_at = now() WHERE tenant_id = %s AND job = ANY(%s)"
RUNS: LiteralString = """
SELECT job, next_run_at, leased_until, runs, last_started_at, last_finished_at, last_result, last_error
  FROM scheduled_runs WHERE tenant_id = %s ORDER BY job
"""


async def ensure(conn: Conn, jobs: Sequence[str]) -> None:
    await conn.execute(ENSURE, [list(jobs)])


async def claim(conn: Conn, jobs: Sequence[str], *, limit: int, lease: float, by: str) -> list[tuple[str, str]]:
    params = {"jobs": list(jobs), "limit": limit, "lease": lease, "by": by}
    return [(r["tenant_id"], r["job"]) for r in await (await conn.execute(CLAIM, params)).fetchall()]


async def settle(
    conn: Conn, tenant_id: str, job: str, *, by: str, every: float, result: dict[str, Any] | None, error: str | None
) -> None:
    params = {"tenant_id": tenant_id, "job": job, "by": by, "every": every,
              "result": Jsonb(result) if result is not None else None, "error": error}  # fmt: skip
    await conn.execute(SETTLE, params)


async def runs(conn: Conn, tenant_id: str) -> list[dict[str, Any]]:
    return list(await (await conn.execute(RUNS, [tenant_id])).fetchall())


async def due_now(conn: Conn, tenant_id: str, jobs: Sequence[str]) -> None:
    await conn.execute(DUE_NOW, [tenant_id, list(jobs)])


async def release(conn: Conn, leased: Sequence[tuple[str, str]], *, by: str) -> None:
    """Hand back leases taken but not run, so the runs are due again at once."""
    params = {"tenants": [t for t, _ in leased], "jobs": [j for _, j in leased], "by": by}
    await conn.execute(RELEASE, params)
