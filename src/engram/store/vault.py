"""The PII vault's rows (migration 0013): sealed values by tenant, kind and ordinal, found by keyed hash.

Sealing and hashing happen in the service (``service/keyring``): this module sees only bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import LiteralString

from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

# New placeholders of a tenant are numbered one writer at a time.
LOCK: LiteralString = "SELECT pg_advisory_xact_lock(hashtextextended('engram.vault:' || %s, 0))"
FIND: LiteralString = """
SELECT v.kind, v.value_hash, v.ordinal
  FROM pii_vault v JOIN unnest(%s::text[], %s::bytea[]) AS w(kind, value_hash)
       ON v.kind = w.kind AND v.value_hash = w.value_hash
 WHERE v.tenant_id = %s
"""
NEXT_ORDINALS: LiteralString = (
    "SELECT kind, max(ordinal) AS last FROM pii_vault WHERE tenant_id = %s AND kind = ANY(%s) GROUP BY kind"
)
INSERT: LiteralString = """
INSERT INTO pii_vault (tenant_id, kind, ordinal, value_hash, key_id, sealed)
SELECT %s, * FROM unnest(%s::text[], %s::integer[], %s::bytea[], %s::text[], %s::bytea[])
"""
FETCH: LiteralString = """
SELECT v.kind, v.ordinal, v.key_id, v.sealed
  FROM pii_vault v JOIN unnest(%s::text[], %s::integer[]) AS w(kind, ordinal)
       ON v.kind = w.kind AND v.ordinal = w.ordinal
 WHERE v.tenant_id = %s
"""
NOT_UNDER: LiteralString = """
SELECT kind, ordinal, key_id, sealed FROM pii_vault
 WHERE tenant_id = %s AND key_id <> %s AND sealed IS NOT NULL ORDER BY kind, ordinal LIMIT %s
"""
ADD_COPIES: LiteralString = """
INSERT INTO pii_vault_subjects (tenant_id, kind, ordinal, subject_key, sealed)
SELECT %s, * FROM unnest(%s::text[], %s::integer[], %s::text[], %s::bytea[])
ON CONFLICT (tenant_id, kind, ordinal, subject_key) DO NOTHING
"""
COPIES: LiteralString = """
SELECT c.kind, c.ordinal, c.subject_key, c.sealed
  FROM pii_vault_subjects c JOIN unnest(%s::text[], %s::integer[]) AS w(kind, ordinal)
       ON c.kind = w.kind AND c.ordinal = w.ordinal
 WHERE c.tenant_id = %s
"""
DROP_COPIES: LiteralString = "DELETE FROM pii_vault_subjects WHERE tenant_id = %s AND subject_key = %s RETURNING kind"
# A value held without a user gets its tenant-wide sealed copy (only under the key its hash is under).
SEAL_SHARED: LiteralString = """
UPDATE pii_vault SET sealed = %s WHERE tenant_id = %s AND kind = %s AND ordinal = %s AND key_id = %s
   AND sealed IS NULL
"""
RESEAL: LiteralString = """
UPDATE pii_vault v SET value_hash = w.value_hash, key_id = w.key_id, sealed = w.sealed
  FROM unnest(%s::text[], %s::integer[], %s::bytea[], %s::text[], %s::bytea[])
       AS w(kind, ordinal, value_hash, key_id, sealed)
 WHERE v.tenant_id = %s AND v.kind = w.kind AND v.ordinal = w.ordinal
"""


ANY_VALUES: LiteralString = "SELECT EXISTS (SELECT 1 FROM pii_vault WHERE tenant_id = %s) AS any"


@dataclass(frozen=True)
class Sealed:
    kind: str
    ordinal: int
    key_id: str
    sealed: bytes | None  # None: sealed only under the keys of the users who wrote it


@dataclass(frozen=True)
class Copy:
    kind: str
    ordinal: int
    subject_key: str
    sealed: bytes


@dataclass(frozen=True)
class NewEntry:
    kind: str
    ordinal: int
    value_hash: bytes
    key_id: str
    sealed: bytes | None


async def any_values(conn: Conn, tenant_id: str) -> bool:
    row = await (await conn.execute(ANY_VALUES, [tenant_id])).fetchone()
    return bool(row and row["any"])


async def lock(conn: Conn, tenant_id: str) -> None:
    await conn.execute(LOCK, [tenant_id])


async def find(conn: Conn, tenant_id: str, wanted: Sequence[tuple[str, bytes]]) -> dict[tuple[str, bytes], int]:
    """Ordinals by (kind, keyed hash), for the hashes that are in the vault."""
    if not wanted:
        return {}
    kinds, hashes = [k for k, _ in wanted], [h for _, h in wanted]
    rows = await (await conn.execute(FIND, [kinds, hashes, tenant_id])).fetchall()
    return {(r["kind"], bytes(r["value_hash"])): r["ordinal"] for r in rows}


async def last_ordinals(conn: Conn, tenant_id: str, kinds: Sequence[str]) -> dict[str, int]:
    rows = await (await conn.execute(NEXT_ORDINALS, [tenant_id, list(kinds)])).fetchall()
    return {r["kind"]: r["last"] for r in rows}


async def insert(conn: Conn, tenant_id: str, entries: Sequence[NewEntry]) -> None:
    if entries:
        await conn.execute(ENSURE_TENANT, [tenant_id])
        await conn.execute(
            INSERT,
            [
                tenant_id, [e.kind for e in entries], [e.ordinal for e in entries],
                [e.value_hash for e in entries], [e.key_id for e in entries], [e.sealed for e in entries],
            ],
        )  # fmt: skip


async def fetch(conn: Conn, tenant_id: str, pairs: Sequence[tuple[str, int]]) -> list[Sealed]:
    if not pairs:
        return []
    rows = await (await conn.execute(FETCH, [[k for k, _ in pairs], [o for _, o in pairs], tenant_id])).fetchall()
    return [Sealed(r["kind"], r["ordinal"], r["key_id"], _bytes(r["sealed"])) for r in rows]


def _bytes(value: bytes | None) -> bytes | None:
    return bytes(value) if value is not None else None


async def add_copies(conn: Conn, tenant_id: str, copies: Sequence[Copy]) -> None:
    if copies:
        await conn.execute(ADD_COPIES, [tenant_id, [c.kind for c in copies], [c.ordinal for c in copies],
                                        [c.subject_key for c in copies], [c.sealed for c in copies]])  # fmt: skip


async def copies(conn: Conn, tenant_id: str, pairs: Sequence[tuple[str, int]]) -> list[Copy]:
    if not pairs:
        return []
    rows = await (await conn.execute(COPIES, [[k for k, _ in pairs], [o for _, o in pairs], tenant_id])).fetchall()
    return [Copy(r["kind"], r["ordinal"], r["subject_key"], bytes(r["sealed"])) for r in rows]


async def drop_copies(conn: Conn, tenant_id: str, subject_key: str) -> int:
    return len(await (await conn.execute(DROP_COPIES, [tenant_id, subject_key])).fetchall())


async def seal_shared(conn: Conn, tenant_id: str, kind: str, ordinal: int, key_id: str, sealed: bytes) -> None:
    await conn.execute(SEAL_SHARED, [sealed, tenant_id, kind, ordinal, key_id])


async def not_under(conn: Conn, tenant_id: str, key_id: str, limit: int) -> list[Sealed]:
    """Values sealed under another key than ``key_id`` (what a rotation has still to do)."""
    rows = await (await conn.execute(NOT_UNDER, [tenant_id, key_id, limit])).fetchall()
    return [Sealed(r["kind"], r["ordinal"], r["key_id"], _bytes(r["sealed"])) for r in rows]


async def reseal(conn: Conn, tenant_id: str, entries: Sequence[NewEntry]) -> None:
    if entries:
        await conn.execute(
            RESEAL,
            [
                [e.kind for e in entries], [e.ordinal for e in entries], [e.value_hash for e in entries],
                [e.key_id for e in entries], [e.sealed for e in entries], tenant_id,
            ],
        )  # fmt: skip
