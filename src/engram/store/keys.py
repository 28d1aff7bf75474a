"""API keys: ``egm_`` + 43 random characters; only a sha256 of the key is stored."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from typing import LiteralString

from engram.model import new_id
from engram.store.database import Conn

ROLES = ("agent", "reviewer", "admin")
KEY_PREFIX = "egm_"

ENSURE_TENANT: LiteralString = "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT (tenant_id) DO NOTHING"
INSERT_KEY: LiteralString = """
INSERT INTO api_keys (tenant_id, id, name, role, prefix, key_hash) VALUES (%s, %s, %s, %s, %s, %s)
"""
AUTHENTICATE: LiteralString = "SELECT tenant_id, key_id, role FROM engram_authenticate(%s)"
LIST_KEYS: LiteralString = """
SELECT id, name, role, prefix, created_at, revoked_at, last_used_at FROM api_keys
 WHERE tenant_id = %s ORDER BY created_at
"""
REVOKE: LiteralString = """
UPDATE api_keys SET revoked_at = now() WHERE tenant_id = %s AND id = %s AND revoked_at IS NULL RETURNING id
"""


@dataclass(frozen=True)
class Principal:
    """Who is calling: the tenant and role come from the key, never from the request."""

    tenant_id: str
    key_id: uuid.UUID
    role: str

    @property
    def actor(self) -> str:
        return f"key:{self.key_id}"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def generate() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


async def create(conn: Conn, tenant_id: str, role: str, name: str) -> tuple[uuid.UUID, str]:
    key = generate()
    key_id = new_id()
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(INSERT_KEY, [tenant_id, key_id, name, role, key[:10], hash_key(key)])
    return key_id, key


async def authenticate(conn: Conn, key: str) -> Principal | None:
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    row = await (await conn.execute(AUTHENTICATE, [hash_key(key)])).fetchone()
    if row is None:
        return None
    return Principal(tenant_id=row["tenant_id"], key_id=row["key_id"], role=row["role"])
