"""The connection pool and the ways to use it.

* ``tenant(tenant_id)``: a transaction running as the non-owner role ``engram_app`` with
  ``engram.tenant_id`` set for that transaction only, so row-level security hides every other tenant
  even from a query that forgot its tenant filter.
* ``reads(tenant_id)``: the same scope for read-only statements, pipelined in one implicit transaction
  (recall's candidate reads: no BEGIN or COMMIT to send and handle).
* ``app()``: a transaction as ``engram_app`` with no tenant set (auth and job functions, the
  multi-tenant writes of receipts and usage counts).
* ``owner()``: a connection as the connecting (owner) user, for migrations and schema upkeep only.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import AsyncConnection, AsyncCursor, sql
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from engram.errors import StoreUnavailable, ValidationError

_log = logging.getLogger(__name__)

APP_ROLE = "engram_app"
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
            # Transactions are explicit (``tenant``, ``app``) or implicit (``reads``); nothing waits on the
            # pool's commit.
            kwargs={"row_factory": dict_row, "autocommit": True},
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
    async def tenant(self, tenant_id: str, settings: Mapping[str, str] | None = None) -> AsyncIterator[Conn]:
        """A transaction scoped to one tenant (RLS on). Commits on success, rolls back on error.
        ``settings`` are further transaction-local settings, set in the same round trip as the tenant."""
        try:
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute(_set_config(tuple(settings.items()) if settings else ()), [tenant_id])
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL is unavailable: {exc}") from exc
        except psycopg.errors.CheckViolation as exc:
            raise check_violation_error(exc) from exc

    @asynccontextmanager
    async def reads(self, tenant_id: str, settings: Mapping[str, str] | None = None) -> AsyncIterator[Conn]:
        """Read-only statements of one tenant (RLS on), in pipeline mode: they are sent without waiting for
        each other's results (until one is fetched), after the tenant and ``settings``, and all of them run
        in one implicit transaction that the pipeline's closing Sync ends. Results not fetched inside the
        block come back with that Sync; the settings end with it.

        No BEGIN or COMMIT: in the client, a pipelined ``transaction()`` cost about 0.7 ms of CPU against
        0.3 ms for the same statements this way (two of them a recall). Only for statements that write
        nothing (a statement that fails ends the implicit transaction and the rest of the block's)."""
        try:
            async with self._pool.connection() as conn, conn.pipeline():
                await conn.execute(_set_config(tuple(settings.items()) if settings else ()), [tenant_id])
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL is unavailable: {exc}") from exc

    @asynccontextmanager
    async def app(self, *, transaction: bool = True) -> AsyncIterator[Conn]:
        """A transaction as engram_app with no tenant set: sees no tenant rows, may call the auth/job functions.
        Without ``transaction``, each statement is its own (implicit) transaction: for a block of one
        statement, which then needs no BEGIN and COMMIT round trips (the receipts' and usage counts' writes)."""
        try:
            async with self._pool.connection() as conn:
                if not transaction:
                    yield conn
                    return
                async with conn.transaction():
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


@functools.lru_cache(maxsize=128)
def _set_config(settings: tuple[tuple[str, str], ...]) -> bytes:
    """The statement that sets a transaction's tenant (its one parameter) and these further settings, their
    values as literals: composed once per set of settings and prepared like any other statement (as two
    text arrays, the names and values were dumped element by element on every transaction)."""
    calls = [sql.SQL("set_config({}, %s, true)").format(sql.Literal(TENANT_SETTING))]
    calls += [sql.SQL("set_config({}, {}, true)").format(sql.Literal(n), sql.Literal(v)) for n, v in settings]
    return (sql.SQL("SELECT ") + sql.SQL(", ").join(calls)).as_bytes(None)


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
