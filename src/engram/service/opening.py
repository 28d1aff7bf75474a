"""Finding and opening the database: the embedded PostgreSQL or DATABASE_URL, schema migrations, and the
service's own least-privileged login (docs/security.md)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from engram.config import Settings
from engram.errors import EngramError, MigrationError
from engram.store.database import Conn, Database, check_login
from engram.store.embedded import EmbeddedPostgres
from engram.store.migrate import Migration, applied, available, migrate

_log = logging.getLogger(__name__)


@dataclass
class Located:
    """Where the database is: the service's login, the owner's (None when not configured), and the embedded
    server when Engram runs one."""

    service: str
    owner: str | None
    embedded: EmbeddedPostgres | None = None


async def locate_database(settings: Settings, *, create: bool = True) -> Located:
    """DATABASE_URL (and ENGRAM_OWNER_DATABASE_URL), or the embedded PostgreSQL (started if needed) in the
    data directory, which gets a service login of its own."""
    if settings.database_url is not None:
        owner = settings.owner_database_url.get_secret_value() if settings.owner_database_url else None
        return Located(settings.database_url.get_secret_value(), owner)
    embedded = EmbeddedPostgres(settings.data_dir, shared_buffers=settings.embedded_shared_buffers)
    owner = await asyncio.to_thread(lambda: embedded.start(create=create))
    return Located(embedded.service_conninfo(), owner, embedded)


async def migrate_database(settings: Settings) -> list[Migration]:
    """Apply pending migrations as the schema owner (ENGRAM_OWNER_DATABASE_URL, else DATABASE_URL, else the
    embedded server's); returns the ones applied now."""
    where = await locate_database(settings)
    try:
        db = Database(where.service, owner_conninfo=where.owner or where.service)
        async with db.owner() as conn:
            done = await migrate(conn)
            await _register_configured_model(conn, settings)
        if where.embedded is not None:
            await asyncio.to_thread(where.embedded.provision_service_login)
        return done
    finally:
        if where.embedded is not None:
            where.embedded.stop()


async def _register_configured_model(conn: Conn, settings: Settings) -> None:
    """Register the configured embedder's model (and build its indexes), so that a service without the
    owner's connection can use it. Nothing is loaded or called: only its id and dimensions are needed."""
    from engram.providers.factory import build_embedder
    from engram.store.embeddings import register_model

    try:
        embedder = build_embedder(settings)
    except EngramError as exc:  # an incomplete embedder configuration: the service will say so when it starts
        _log.warning("the embedding model was not registered: %s", exc.message)
        return
    await register_model(conn, embedder.model_id, embedder.dimensions)


async def connect_store(
    settings: Settings, *, run_migrations: bool | None = None, create: bool = True
) -> tuple[Database, EmbeddedPostgres | None]:
    """Start the embedded PostgreSQL (no DATABASE_URL) or use the external one, bring the schema up to
    date (automatically on the embedded database), and open the pool as the service's login. Without
    ``create`` an embedded data directory must already hold a database."""
    where = await locate_database(settings, create=create)
    try:
        db = Database(
            where.service,
            owner_conninfo=where.owner,
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
            statement_timeout=settings.statement_timeout,
            tenant_share=settings.tenant_pool_share,
        )
        if run_migrations if run_migrations is not None else where.embedded is not None:
            async with db.owner() as conn:
                await migrate(conn)
        if where.embedded is not None:
            await asyncio.to_thread(where.embedded.provision_service_login)
        async with db.direct() as conn:  # before the pool: say what is wrong, not "pool incomplete"
            await require_current_schema(conn)
            await check_login(conn)
        await db.open()
    except BaseException:
        if where.embedded is not None:
            where.embedded.stop()
        raise
    return db, where.embedded


async def require_current_schema(conn: Conn) -> None:
    done = await applied(conn)
    pending = [m for m in available() if m.version not in done]
    if pending:
        raise MigrationError(
            f"the database schema is behind this version of Engram ({len(pending)} migration(s) pending, "
            f"first {pending[0].version:04d}_{pending[0].name}); run `engram migrate`"
        )
