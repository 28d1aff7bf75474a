"""Tenant rows: settings an admin may change (inside ``Database.tenant``)."""

from __future__ import annotations

from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.errors import ValidationError
from engram.model.tenant import TenantSettings, source_trust
from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

SELECT: LiteralString = """
SELECT t.tenant_id, t.fts_config::text AS fts_config, t.created_at, t.settings -> 'source_trust' AS source_trust,
       (SELECT count(*) FROM memories m WHERE m.tenant_id = t.tenant_id AND m.fts_config <> t.fts_config)
           AS memories_to_reindex
  FROM tenants t WHERE t.tenant_id = %s
"""
KNOWN_CONFIG: LiteralString = "SELECT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = %s) AS ok"
SET_CONFIG: LiteralString = "UPDATE tenants SET fts_config = %s::regconfig WHERE tenant_id = %s"
# Some memories indexed again with the tenant's configuration (their search keys and postings, by the
# triggers of 0002), a batch at a time; returns the sessions they are in, whose conversational keys follow.
REINDEX_BATCH: LiteralString = """
UPDATE memories m SET fts_config = t.fts_config
  FROM tenants t
 WHERE t.tenant_id = %(tenant_id)s AND m.tenant_id = t.tenant_id
   AND m.id IN (SELECT x.id FROM memories x JOIN tenants y ON y.tenant_id = x.tenant_id
                 WHERE x.tenant_id = %(tenant_id)s AND x.fts_config <> y.fts_config
                 LIMIT %(limit)s FOR UPDATE OF x SKIP LOCKED)
RETURNING m.session_id
"""
REINDEX_BATCH_SIZE = 50


async def get(conn: Conn, tenant_id: str) -> TenantSettings:
    row = await (await conn.execute(SELECT, [tenant_id])).fetchone()
    if row is None:
        return TenantSettings(tenant_id=tenant_id, fts_config="english", created_at=None, memories_to_reindex=0)
    return TenantSettings.model_validate({**row, "source_trust": source_trust(row["source_trust"])})


SET_SOURCE_TRUST: LiteralString = """
UPDATE tenants SET settings = jsonb_set(settings, '{source_trust}', coalesce(settings -> 'source_trust', '{}') || %s)
 WHERE tenant_id = %s
"""


async def set_source_trust(conn: Conn, tenant_id: str, trust: dict[str, float]) -> None:
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(SET_SOURCE_TRUST, [Jsonb(trust), tenant_id])


async def set_fts_config(conn: Conn, tenant_id: str, config: str) -> None:
    """Change the tenant's text search configuration (its memories follow by ``reindex_batch``)."""
    row = await (await conn.execute(KNOWN_CONFIG, [config])).fetchone()
    if not row or not row["ok"]:
        raise ValidationError(
            f"fts_config {config!r} is not a text search configuration of this database (see \\dF in psql: "
            "english, german, simple, ...)",
            field="fts_config",
        )
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(SET_CONFIG, [config, tenant_id])


async def reindex_batch(conn: Conn, tenant_id: str) -> tuple[int, list[str]]:
    """Index up to REINDEX_BATCH_SIZE memories again; returns how many, and the sessions they are in."""
    params = {"tenant_id": tenant_id, "limit": REINDEX_BATCH_SIZE}
    rows = await (await conn.execute(REINDEX_BATCH, params)).fetchall()
    return len(rows), sorted({r["session_id"] for r in rows if r["session_id"] is not None})


SELECT_ADMISSION: LiteralString = "SELECT settings -> 'admission' AS policy FROM tenants WHERE tenant_id = %s"
SET_ADMISSION: LiteralString = (
    "UPDATE tenants SET settings = jsonb_set(settings, '{admission}', %s::jsonb) WHERE tenant_id = %s"
)


async def admission_policy(conn: Conn, tenant_id: str) -> dict[str, Any] | None:
    """The tenant's admission policy as stored, or None when it has never been set."""
    row = await (await conn.execute(SELECT_ADMISSION, [tenant_id])).fetchone()
    return row["policy"] if row and row["policy"] is not None else None


async def set_admission_policy(conn: Conn, tenant_id: str, policy: dict[str, Any]) -> None:
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(SET_ADMISSION, [Jsonb(policy), tenant_id])


async def ensure(conn: Conn, tenant_id: str) -> None:
    """The tenant's row (the scheduler's list of tenants), made on its first write."""
    await conn.execute(ENSURE_TENANT, [tenant_id])
