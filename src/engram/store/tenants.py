"""Tenant rows: settings an admin may change (inside ``Database.tenant``)."""

from __future__ import annotations

from typing import LiteralString

from engram.errors import ValidationError
from engram.model.tenant import TenantSettings
from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

SELECT: LiteralString = "SELECT tenant_id, fts_config::text AS fts_config, created_at FROM tenants WHERE tenant_id = %s"
KNOWN_CONFIG: LiteralString = "SELECT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = %s) AS ok"
SET_CONFIG: LiteralString = "UPDATE tenants SET fts_config = %s::regconfig WHERE tenant_id = %s"
# Every memory indexed again (its search key and postings, by the triggers of 0002) with the new configuration.
REINDEX: LiteralString = (
    "UPDATE memories SET fts_config = %s::regconfig WHERE tenant_id = %s AND fts_config <> %s::regconfig"
)
SESSIONS: LiteralString = "SELECT DISTINCT session_id FROM memories WHERE tenant_id = %s AND session_id IS NOT NULL"


async def get(conn: Conn, tenant_id: str) -> TenantSettings:
    row = await (await conn.execute(SELECT, [tenant_id])).fetchone()
    if row is None:
        return TenantSettings(tenant_id=tenant_id, fts_config="english", created_at=None)
    return TenantSettings.model_validate(row)


async def set_fts_config(conn: Conn, tenant_id: str, config: str) -> list[str]:
    """Change the text search configuration and index every memory again; returns the sessions whose
    conversational keys must be rebuilt."""
    row = await (await conn.execute(KNOWN_CONFIG, [config])).fetchone()
    if not row or not row["ok"]:
        raise ValidationError(
            f"fts_config {config!r} is not a text search configuration of this database (see \\dF in psql: "
            "english, german, simple, ...)",
            field="fts_config",
        )
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(SET_CONFIG, [config, tenant_id])
    await conn.execute(REINDEX, [config, tenant_id, config])
    return [r["session_id"] for r in await (await conn.execute(SESSIONS, [tenant_id])).fetchall()]
