"""The connection pool and the ways to use it.

* ``tenant(tenant_id)``: a transaction running as the non-owner role ``engram_app`` with
  ``engram.tenant_id`` set for that transaction only, so row-level security hides every other tenant
  even from a query that forgot its tenant filter.
* ``app()``: a transaction as ``engram_app`` with no tenant set (auth and job functions, the
  multi-tenant writes of receipts and usage counts).
* ``owner()``: a connection as the connecting (owner) user, for migrations and schema upkeep only.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, LiteralString

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from engram.errors import StoreUnavailable, ValidationError

_log = logging.getLogger(__name__)

APP_ROLE = "engram_app"
_SET_CONFIG: LiteralString = "SELECT set_config(n, v, true) FROM unnest(%s::text[], %s::text[]) AS s(n, v)"
TENANT_SETTING = "engram.tenant_id"

Conn = AsyncConnection[DictRow]
Cursor = AsyncCursor[DictRow]


class Database:
    """One async pool per process; every query goes through it."""

    def __init__(self, conninfo: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 10.0) -> None:
        self.conninfo = conninfo
        self._pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            conninfo,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            open=False,
            configure=self._configure,
            kwargs={"row_factory": dict_row},
            connection_class=AsyncConnection[DictRow],
        )

    async def open(self, *, wait: bool = True) -> None:
        """Open the pool; with ``wait`` (the default), fail now if PostgreSQL cannot be reached."""
        try:
            await self._pool.open(wait=wait, timeout=self._pool.timeout)
        except Exception as exc:
            raise StoreUnavailable(f"cannot connect to PostgreSQL ({redact(self.conninfo)}): {exc}") from exc

    async def close(self) -> None:
        await self._pool.close()

    @staticmethod
    async def _configure(conn: Conn) -> None:
        await conn.execute(f"SET ROLE {APP_ROLE}")
        await register_vector_async(conn)
        await conn.commit()

    @asynccontextmanager
    async def tenant(
        self, tenant_id: str, settings: Mapping[str, str] | None = None, *, pipeline: bool = False
    ) -> AsyncIterator[Conn]:
        """A transaction scoped to one tenant (RLS on). Commits on success, rolls back on error.
        ``settings`` are further transaction-local settings, set in the same round trip. With ``pipeline``
        the connection is in pipeline mode: statements are sent without waiting for the previous ones'
        results, until a result is fetched (BEGIN, the settings and the first query go in one round trip)."""
        names = [TENANT_SETTING, *(settings or {})]
        values = [tenant_id, *(settings or {}).values()]
        try:
            async with self._pool.connection() as conn, contextlib.AsyncExitStack() as stack:
                if pipeline:
                    await stack.enter_async_context(conn.pipeline())
                await stack.enter_async_context(conn.transaction())
                await conn.execute(_SET_CONFIG, [names, values])
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL is unavailable: {exc}") from exc
        except psycopg.errors.CheckViolation as exc:
            raise check_violation_error(exc) from exc

    @asynccontextmanager
    async def app(self) -> AsyncIterator[Conn]:
        """A transaction as engram_app with no tenant set: sees no tenant rows, may call the auth/job functions."""
        try:
            async with self._pool.connection() as conn, conn.transaction():
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL is unavailable: {exc}") from exc

    @asynccontextmanager
    async def owner(self) -> AsyncIterator[AsyncConnection[DictRow]]:
        """A dedicated autocommit connection as the connecting user (schema owner)."""
        try:
            conn = await AsyncConnection.connect(self.conninfo, autocommit=True, row_factory=dict_row)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"cannot connect to PostgreSQL ({redact(self.conninfo)}): {exc}") from exc
        # Before the first migration the vector extension does not exist yet.
        with contextlib.suppress(psycopg.ProgrammingError):
            await register_vector_async(conn)
        try:
            yield conn
        finally:
            await conn.close()

    def stats(self) -> dict[str, Any]:
        return dict(self._pool.get_stats())


# Constraint name -> field it guards, so a database CHECK failure still names the field.
_CONSTRAINT_FIELDS = {
    "memories_valid_window": "valid_until",
    "engram_tenant_check": "tenant_id",
}
_COLUMN_CHECK = re.compile(r"^memories_(\w+?)_check\d*$")


def check_violation_error(exc: psycopg.errors.CheckViolation) -> ValidationError:
    name = exc.diag.constraint_name or ""
    field = _CONSTRAINT_FIELDS.get(name)
    if field is None and (m := _COLUMN_CHECK.match(name)):
        field = m.group(1)
    return ValidationError(f"{field or 'value'} violates the database rule {name}", field=field)


def redact(conninfo: str) -> str:
    """conninfo without its password."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", conninfo)
