"""The connection pool and the ways to use it.

The pool logs in as the service role (``engram_app``, or a login role granted it): not a superuser, not
the schema owner, no BYPASSRLS; ``open`` refuses anything more (docs/security.md). Every pooled connection
works in UTC and under a statement timeout.

* ``tenant(tenant_id)``: a transaction with ``engram.tenant_id`` set for that transaction only, so
  row-level security hides every other tenant even from a query that forgot its tenant filter.
* ``reads(tenant_id)``: the same scope for read-only statements, pipelined in one implicit transaction
  (recall's candidate reads: no BEGIN or COMMIT to send and handle).
* ``tenants(rows)``: one pipelined transaction that writes for several tenants in turn, each statement
  under its own tenant's policies (receipts and usage counts, written behind recalls).
* ``app()``: a transaction with no tenant set (key lookup).
* ``queue()``: a transaction that may lease the embedding queue across tenants (ids only).
* ``owner()``: a connection as the schema owner (``owner_conninfo``), for migrations and upkeep only.

For a remote caller (``metered``), a tenant holds at most ``tenant_share`` of the pool's connections at once;
beyond it a request is refused at once (``Throttled``, with Retry-After).
Database errors leave every block translated (``store.errors``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import re
import weakref
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Hashable, Iterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import AsyncConnection, AsyncCursor, sql
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from engram.errors import EngramError, StoreUnavailable, Throttled
from engram.store.errors import translate

_log = logging.getLogger(__name__)

APP_ROLE = "engram_app"
TENANT_SETTING = "engram.tenant_id"
KEY_HASH_SETTING = "engram.key_hash"
QUEUE_SETTING = "engram.job_queue"

Conn = AsyncConnection[DictRow]
Cursor = AsyncCursor[DictRow]

# Whether the current task works for a remote caller (an API key), whose tenant's share of the pool is
# metered; the service sets it for every operation. In-process callers are trusted and not metered.
metered: ContextVar[bool] = ContextVar("engram_metered", default=False)

# What the login role of the pool must not be: the checks of ``Database.open``.
LOGIN_PRIVILEGES = """
SELECT session_user AS login, r.rolsuper AS superuser, r.rolbypassrls AS bypassrls,
       pg_has_role(session_user, c.relowner, 'MEMBER') AS owner
  FROM pg_roles r, pg_class c
 WHERE r.rolname = session_user AND c.oid = to_regclass('memories')
"""


async def check_login(conn: Conn) -> None:
    """Refuse a login that row-level security would not hold: a superuser, a BYPASSRLS role, the schema's
    owner or a member of it."""
    row = await (await conn.execute(LOGIN_PRIVILEGES)).fetchone()
    if row is None:  # no schema yet: nothing to protect
        return
    too_much = [name for name in ("superuser", "bypassrls", "owner") if row[name]]
    if too_much:
        raise StoreUnavailable(
            f"the service would log in to PostgreSQL as {row['login']!r}, which is {' and '.join(too_much)} and "
            "so not held to row-level security. Give DATABASE_URL a login role granted engram_app (CREATE ROLE "
            "engram_service LOGIN PASSWORD '...' IN ROLE engram_app) and the owner's URL as "
            "ENGRAM_OWNER_DATABASE_URL (docs/security.md)"
        )


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Raise database errors as Engram's (``store.errors.TABLE``)."""
    try:
        yield
    except EngramError:
        raise
    except (psycopg.Error, UnicodeEncodeError) as exc:
        mapped = translate(exc)
        if mapped is None:
            raise
        raise mapped from exc


# What the connection being asked for will run (``Database.reads``'s ``warm``), read by the pool.
_WANTED: ContextVar[Hashable | None] = ContextVar("engram_wanted_warm", default=None)
WARM_KEYS = 64  # keys remembered per connection (psycopg keeps up to 100 prepared statements on each)


class RecentFirstPool(AsyncConnectionPool[Conn]):
    """A pool that hands out the idle connection returned last, where psycopg_pool's hands out the one idle
    longest. Each connection keeps its own prepared statements and plans (a large owner's dense statement is
    one per owner, ``retrieval.retrievers.dense``) and its server process its own caches: handed out in
    turn, a light load spread its recalls over every connection and found them cold (at a million
    memories, 3.45 against 2.72 ms of Python CPU a recall, docs/performance.md). The connections idle
    longest stay at the other end, the ones the pool's shrinking closes first.

    A request may also name what it will run (a key, ``Database.reads``'s ``warm``): an idle connection
    that ran it before is handed out first, where its statements are prepared and planned. Which
    connection is returned last depends on which of a recall's reads ends last; a large owner's statement
    found cold on it cost that recall 1.2-1.75 ms (docs/retrieval.md, "Large owners")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._warm: weakref.WeakKeyDictionary[Conn, OrderedDict[Hashable, None]] = weakref.WeakKeyDictionary()

    async def _get_ready_connection(self, timeout: float | None) -> Conn | None:  # noqa: ASYNC109 (its signature)
        self._pool.rotate(1)  # the connection returned last to the front, the others in their order
        wanted = _WANTED.get()
        warm = None if wanted is None else next((c for c in self._pool if self.ran(c, wanted)), None)
        if warm is not None:  # to the front, ahead of the one returned last
            self._pool.remove(warm)
            self._pool.appendleft(warm)
        return await super()._get_ready_connection(timeout)

    def ran(self, conn: Conn, key: Hashable) -> bool:
        """Whether ``key`` was marked on ``conn`` (``mark``), among its last ``WARM_KEYS``."""
        return key in self._warm.get(conn, ())

    def mark(self, conn: Conn, key: Hashable) -> None:
        keys = self._warm.setdefault(conn, OrderedDict())
        keys[key] = None
        keys.move_to_end(key)
        if len(keys) > WARM_KEYS:
            keys.popitem(last=False)


class Database:
    """One async pool per process; every query goes through it."""

    def __init__(
        self,
        conninfo: str,
        *,
        owner_conninfo: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
        statement_timeout: float = 5.0,
        tenant_share: float = 1.0,
    ) -> None:
        self.conninfo = conninfo
        self.owner_conninfo = owner_conninfo
        self.statement_timeout = statement_timeout
        self.tenant_limit = max(1, math.ceil(max_size * tenant_share))
        self._in_use: Counter[str] = Counter()
        self._pool = RecentFirstPool(
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

    @asynccontextmanager
    async def direct(self) -> AsyncIterator[Conn]:
        """One autocommit connection of the service's login, outside the pool and without its set-up: to
        check, before the pool opens, that the schema is there and the login may serve."""
        with translated():
            conn = await _connect(self.conninfo)
            try:
                yield conn
            finally:
                await conn.close()

    async def close(self) -> None:
        await self._pool.close()

    async def _configure(self, conn: Conn) -> None:
        # One round trip: the role (a login role granted engram_app acts as it), UTC (a time near the ends of
        # years 1..9999 in another zone could not be read back), and the cost bound of every statement.
        await conn.execute(
            sql.SQL("SET ROLE {}; SET TimeZone = 'UTC'; SET statement_timeout = {}").format(
                sql.Identifier(APP_ROLE), sql.Literal(max(1, round(self.statement_timeout * 1000)))
            )
        )
        with contextlib.suppress(psycopg.ProgrammingError):  # no schema yet: ``open`` will say so
            await register_vector_async(conn)
        await conn.commit()

    @asynccontextmanager
    async def _share(self, tenant_id: str) -> AsyncIterator[None]:
        """Count a connection against the tenant's share of the pool (``metered`` callers), or refuse it at
        once: waiting for a slot, even briefly, lets a tenant's costly requests queue up and keep its whole
        share busy, at the other tenants' expense (docs/security.md)."""
        if not metered.get():
            yield
            return
        if self._in_use[tenant_id] >= self.tenant_limit:
            raise Throttled(
                f"tenant {tenant_id} already has {self.tenant_limit} requests at the database (its share of "
                "this server's connections); retry after the time Retry-After gives",
                retry_after=1,
            )
        self._in_use[tenant_id] += 1
        try:
            yield
        finally:
            self._in_use[tenant_id] -= 1
            if not self._in_use[tenant_id]:
                del self._in_use[tenant_id]

    @asynccontextmanager
    async def tenant(self, tenant_id: str, settings: Mapping[str, str] | None = None) -> AsyncIterator[Conn]:
        """A transaction scoped to one tenant (RLS on). Commits on success, rolls back on error.
        ``settings`` are further transaction-local settings, set in the same round trip as the tenant."""
        async with self._share(tenant_id):
            with translated():
                async with self._pool.connection() as conn, conn.transaction():
                    await conn.execute(_set_config(tuple(settings.items()) if settings else ()), [tenant_id])
                    yield conn

    @asynccontextmanager
    async def _connection(self, warm: Hashable | None) -> AsyncIterator[Conn]:
        """A pooled connection; with ``warm``, one that ran it before if one is idle, marked as running it."""
        token = _WANTED.set(warm)  # read by the pool when it picks the connection
        try:
            async with self._pool.connection() as conn:
                if warm is not None:
                    self._pool.mark(conn, warm)
                yield conn
        finally:
            _WANTED.reset(token)

    @asynccontextmanager
    async def reads(
        self, tenant_id: str, settings: Mapping[str, str] | None = None, *, warm: Hashable | None = None
    ) -> AsyncIterator[Conn]:
        """Read-only statements of one tenant (RLS on), in pipeline mode: they are sent without waiting for
        each other's results (until one is fetched), after the tenant and ``settings``, and all of them run
        in one implicit transaction that the pipeline's closing Sync ends. Results not fetched inside the
        block come back with that Sync; the settings end with it. No BEGIN or COMMIT to send; only for
        statements that write nothing (a statement that fails ends the implicit transaction and the rest
        of the block's). ``warm`` names statements prepared per connection that the block will run: an
        idle connection that ran them before is preferred (``RecentFirstPool``)."""
        async with self._share(tenant_id):
            with translated():
                async with self._connection(warm) as conn, conn.pipeline():
                    await conn.execute(_set_config(tuple(settings.items()) if settings else ()), [tenant_id])
                    yield conn

    @asynccontextmanager
    async def tenants(self) -> AsyncIterator[TenantSwitch]:
        """One pipelined transaction that writes for several tenants in turn: ``await switch(tenant)`` before
        each tenant's statements (each then runs under that tenant's policies). Nothing is waited for until
        the pipeline's closing Sync: a batch costs one round trip. The statements up to it are one implicit
        transaction (as in ``reads``), which that Sync commits, or rolls back if any of them failed."""
        with translated():
            async with self._pool.connection() as conn, conn.pipeline():
                yield TenantSwitch(conn)

    @asynccontextmanager
    async def app(self, *, transaction: bool = True) -> AsyncIterator[Conn]:
        """A connection with no tenant set: sees no tenant rows. With ``transaction`` (the default) one
        transaction; without, each statement is its own."""
        with translated():
            async with self._pool.connection() as conn:
                if not transaction:
                    yield conn
                    return
                async with conn.transaction():
                    yield conn

    @asynccontextmanager
    async def queue(self) -> AsyncIterator[Conn]:
        """A transaction that may read and lease the embedding queue of every tenant (ids and errors only)."""
        with translated():
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute(_QUEUE_SCOPE)
                yield conn

    @asynccontextmanager
    async def owner(self) -> AsyncIterator[AsyncConnection[DictRow]]:
        """A dedicated autocommit connection as the schema owner (``owner_conninfo``)."""
        if self.owner_conninfo is None:
            raise StoreUnavailable(
                "this needs the schema owner's connection: set ENGRAM_OWNER_DATABASE_URL (the service's own "
                "login may not change the schema)"
            )
        with translated():
            conn = await _connect(self.owner_conninfo)
            try:
                await conn.execute("SET TimeZone = 'UTC'")
                # Before the first migration the vector extension does not exist yet.
                with contextlib.suppress(psycopg.ProgrammingError):
                    await register_vector_async(conn)
                yield conn
            finally:
                await conn.close()

    def stats(self) -> dict[str, Any]:
        return dict(self._pool.get_stats())


async def _connect(conninfo: str) -> Conn:
    """A dedicated autocommit connection, outside the pool."""
    try:
        return await AsyncConnection.connect(conninfo, autocommit=True, row_factory=dict_row)
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"cannot connect to PostgreSQL ({redact(conninfo)}): {exc}") from exc


class TenantSwitch:
    """``Database.tenants``: the connection, and the tenant its next statements run for."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    async def __call__(self, tenant_id: str) -> Conn:
        await self.conn.execute(_SWITCH, [tenant_id])
        return self.conn


_SWITCH = sql.SQL("SELECT set_config({}, %s, true)").format(sql.Literal(TENANT_SETTING)).as_bytes(None)
_QUEUE_SCOPE = sql.SQL("SELECT set_config({}, 'lease', true)").format(sql.Literal(QUEUE_SETTING)).as_bytes(None)


@functools.lru_cache(maxsize=128)
def _set_config(settings: tuple[tuple[str, str], ...]) -> bytes:
    """The statement that sets a transaction's tenant (its one parameter) and these further settings, their
    values as literals: composed once per set of settings and prepared like any other statement (as two
    text arrays, the names and values were dumped element by element on every transaction)."""
    calls = [sql.SQL("set_config({}, %s, true)").format(sql.Literal(TENANT_SETTING))]
    calls += [sql.SQL("set_config({}, {}, true)").format(sql.Literal(n), sql.Literal(v)) for n, v in settings]
    return (sql.SQL("SELECT ") + sql.SQL(", ").join(calls)).as_bytes(None)


def redact(conninfo: str) -> str:
    """conninfo without its password."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", conninfo)
