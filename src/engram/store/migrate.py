"""Versioned SQL migrations: ``migrations/NNNN_name.sql``, applied in order, each in its own transaction,
recorded with a checksum in ``engram_migrations``. A file whose first line is ``-- engram:no-transaction``
runs outside a transaction (for statements such as CREATE INDEX CONCURRENTLY).

Concurrent runners serialise on an advisory lock, so many replicas may start at once.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from engram.errors import MigrationError

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x656E6772616D  # "engram"
NO_TRANSACTION = "-- engram:no-transaction"

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS engram_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def available() -> list[Migration]:
    """The migrations shipped with this version of Engram, in order."""
    found = []
    for entry in resources.files("engram.migrations").iterdir():
        m = _NAME.match(entry.name)
        if m:
            found.append(Migration(int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda mig: mig.version)
    versions = [mig.version for mig in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a version number: {versions}")
    return found


async def applied(conn: AsyncConnection[DictRow]) -> dict[int, str]:
    # The service's login may read the table only from migration 0011 on: before that, as if none ran.
    exists = await (
        await conn.execute(
            "SELECT CASE WHEN to_regclass('engram_migrations') IS NULL THEN false"
            " ELSE has_table_privilege('engram_migrations', 'SELECT') END AS ok"
        )
    ).fetchone()
    if not exists or not exists["ok"]:
        return {}
    cur = await conn.execute("SELECT version, checksum FROM engram_migrations")
    return {int(r["version"]): str(r["checksum"]) for r in await cur.fetchall()}


async def migrate(conn: AsyncConnection[DictRow], migrations: list[Migration] | None = None) -> list[Migration]:
    """Apply every pending migration; return the ones applied now. ``conn`` must be in autocommit mode."""
    migrations = available() if migrations is None else migrations
    await conn.execute("SELECT pg_advisory_lock(%s)", [_LOCK_KEY])
    try:
        await conn.execute(_CREATE_TABLE)
        done = await applied(conn)
        for mig in migrations:
            if mig.version in done and done[mig.version] != mig.checksum:
                raise MigrationError(
                    f"migration {mig.version:04d}_{mig.name} was changed after it was applied; "
                    "write a new migration instead of editing an applied one"
                )
        pending = [mig for mig in migrations if mig.version not in done]
        for mig in pending:
            await _apply(conn, mig)
        return pending
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


async def _apply(conn: AsyncConnection[DictRow], mig: Migration) -> None:
    record = "INSERT INTO engram_migrations (version, name, checksum) VALUES (%s, %s, %s)"
    try:
        if mig.sql.lstrip().startswith(NO_TRANSACTION):
            await conn.execute(mig.sql.encode())
            await conn.execute(record, [mig.version, mig.name, mig.checksum])
        else:
            async with conn.transaction():
                await conn.execute(mig.sql.encode())
                await conn.execute(record, [mig.version, mig.name, mig.checksum])
    except psycopg.Error as exc:
        raise MigrationError(f"migration {mig.version:04d}_{mig.name} failed: {exc}") from exc
