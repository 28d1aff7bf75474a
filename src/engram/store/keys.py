"""API keys: ``egm_`` + 43 random characters; only a sha256 of the key is stored.

A key is looked up before its tenant is known, in a transaction that names the key's hash
(``engram.key_hash``): the ``key_lookup`` policy shows that transaction the one key with that hash and
nothing else (migration 0011). Everything else about keys runs inside the key's tenant.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from typing import Any, LiteralString

from psycopg import sql

from engram.model import new_id
from engram.model.access import ApiKey, KeyInput, Principal
from engram.store.database import KEY_HASH_SETTING, TENANT_SETTING, Conn

KEY_PREFIX = "egm_"
KEY_LENGTH = len(KEY_PREFIX) + 43

ENSURE_TENANT: LiteralString = "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT (tenant_id) DO NOTHING"
_KEY_COLUMNS: LiteralString = (
    "id, name, role, prefix, user_id, agent_id, can_reveal, created_at, revoked_at, last_used_at"
)
INSERT_KEY: LiteralString = (
    "INSERT INTO api_keys (tenant_id, id, name, role, prefix, key_hash, user_id, agent_id, can_reveal)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING " + _KEY_COLUMNS
)
LOOKUP: LiteralString = (
    "SELECT tenant_id, id, role, user_id, agent_id, can_reveal, last_used_at < now() - interval '1 minute' AS stale,"
    " last_used_at IS NULL AS unused FROM api_keys WHERE key_hash = %s AND revoked_at IS NULL"
)
_NAME_HASH = sql.SQL("SELECT set_config({}, %s, true)").format(sql.Literal(KEY_HASH_SETTING)).as_bytes(None)
_NAME_TENANT = sql.SQL("SELECT set_config({}, %s, true)").format(sql.Literal(TENANT_SETTING)).as_bytes(None)
MARK_USED: LiteralString = "UPDATE api_keys SET last_used_at = now() WHERE tenant_id = %s AND id = %s"
LIST_KEYS: LiteralString = "SELECT " + _KEY_COLUMNS + " FROM api_keys WHERE tenant_id = %s ORDER BY created_at, id"
REVOKE: LiteralString = (
    "UPDATE api_keys SET revoked_at = now() WHERE tenant_id = %s AND id = %s AND revoked_at IS NULL"
    " RETURNING " + _KEY_COLUMNS
)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def generate() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def well_formed(key: str) -> bool:
    """A string that could be a key (anything else is refused without a database round trip)."""
    return key.startswith(KEY_PREFIX) and len(key) == KEY_LENGTH and key.isascii()


async def create(conn: Conn, tenant_id: str, spec: KeyInput) -> tuple[ApiKey, str]:
    """A new key of the tenant (inside ``Database.tenant``); returns it and its secret."""
    key = generate()
    await conn.execute(ENSURE_TENANT, [tenant_id])
    row = await (
        await conn.execute(
            INSERT_KEY,
            [
                tenant_id,
                new_id(),
                spec.name,
                spec.role,
                key[:10],
                hash_key(key),
                spec.user_id,
                spec.agent_id,
                spec.can_reveal,
            ],
        )
    ).fetchone()
    assert row is not None
    return ApiKey.model_validate(row), key


async def authenticate(conn: Conn, key: str) -> Principal | None:
    """The principal of an active key, or None (inside ``Database.app``: a transaction of its own)."""
    if not well_formed(key):
        return None
    digest = hash_key(key)
    await conn.execute(_NAME_HASH, [digest])
    row: dict[str, Any] | None = await (await conn.execute(LOOKUP, [digest])).fetchone()
    if row is None:
        return None
    if row["unused"] or row["stale"]:  # last use, to the minute
        await conn.execute(_NAME_TENANT, [row["tenant_id"]])
        await conn.execute(MARK_USED, [row["tenant_id"], row["id"]])
    return Principal(
        tenant_id=row["tenant_id"], role=row["role"], key_id=row["id"], user_id=row["user_id"],
        agent_id=row["agent_id"], can_reveal=row["can_reveal"],
    )  # fmt: skip


async def list_keys(conn: Conn, tenant_id: str) -> list[ApiKey]:
    rows = await (await conn.execute(LIST_KEYS, [tenant_id])).fetchall()
    return [ApiKey.model_validate(r) for r in rows]


async def revoke(conn: Conn, tenant_id: str, key_id: uuid.UUID) -> ApiKey | None:
    row = await (await conn.execute(REVOKE, [tenant_id, key_id])).fetchone()
    return ApiKey.model_validate(row) if row else None
