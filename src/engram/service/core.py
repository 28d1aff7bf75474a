"""The service's core: opening and closing Engram, and who is calling (``_who``). The operations live in
the classes built on it (``reads``, ``admin``, ``engram``)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from engram.config import Settings
from engram.errors import MigrationError, PermissionDenied, ValidationError
from engram.model.access import Principal
from engram.model.admission import AdmissionPolicy
from engram.model.ids import check_tenant, parse_uuid
from engram.providers.base import Embedder
from engram.providers.gateway import EmbeddingGateway
from engram.retrieval.engine import Retriever
from engram.service.keyring import Keyring
from engram.service.opening import connect_store
from engram.service.subject_keys import SubjectKeys
from engram.store import embeddings as emb
from engram.store import reembed as reembed_store
from engram.store.database import Database, metered
from engram.store.embedded import EmbeddedPostgres

_log = logging.getLogger(__name__)
FOLLOW_EVERY = 5.0  # seconds between checks whether reads moved to another embedding model

CACHE_SECONDS = 10.0  # a revocation takes effect on other processes within this
_CACHE_SIZE = 10_000


K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """Values kept for CACHE_SECONDS, so a request costs no lookup: principals by key digest, admission
    policies by tenant. A change made in this process drops its entry at once."""

    def __init__(self) -> None:
        self._entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> V | None:
        hit = self._entries.get(key)
        if hit and hit[0] > time.monotonic():
            return hit[1]
        return None

    def put(self, key: K, value: V) -> None:
        if len(self._entries) >= _CACHE_SIZE:
            self._entries.clear()
        self._entries[key] = (time.monotonic() + CACHE_SECONDS, value)

    def drop(self, unwanted: Callable[[V], bool]) -> None:
        self._entries = {k: e for k, e in self._entries.items() if not unwanted(e[1])}


class Core:
    """What every operation of Engram stands on: the pool, the embedder's gateway, the retriever, the key
    cache, and ``_who``, the caller of each operation."""

    def __init__(
        self,
        db: Database,
        gateway: EmbeddingGateway | None,
        *,
        tenant: str | None = None,
        embedded: EmbeddedPostgres | None = None,
        inline_receipts: bool = False,
        settings: Settings | None = None,
    ) -> None:
        self.db = db
        self._settings = settings
        self._keyring: Keyring | None = None
        self._subject_keys: SubjectKeys | None = None
        self.retriever = Retriever(db, gateway, inline_receipts=inline_receipts)
        self.gateway = gateway
        self.default_tenant = tenant
        self.embedded = embedded
        self.work_pending = asyncio.Event()  # set when memories wait for a vector
        self.key_cache: Recent[str, Principal] = Recent()
        self.policies: Recent[str, AdmissionPolicy] = Recent()
        self.vault_used: Recent[str, bool] = Recent()  # whether a tenant's vault holds values
        self._background: set[asyncio.Task[Any]] = set()
        # The time lifecycle rules read (workflow freshness, decay, expiry): replaceable, so tests can move a
        # day ahead without waiting for it.
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self.known_tenants: set[str] = set()
        self._followed = time.monotonic()  # tenants whose row this process made sure of (store.tenants)

    # --- lifecycle -------------------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        tenant: str | None = None,
        run_migrations: bool | None = None,
        embedding: bool = True,
        create: bool = True,
    ) -> Self:
        """Connect (starting the embedded PostgreSQL when no DATABASE_URL is set), migrate, load the embedder.

        Migrations run automatically on the embedded database; on an external one run ``engram migrate``
        (or pass ``run_migrations=True``). ``embedding=False`` skips the embedder (for read-only tools);
        ``create=False`` refuses an embedded data directory that holds no database yet (commands that only
        read or change what is there).
        """
        settings = settings or Settings()
        inline = settings.recall_receipts == "inline"
        db, embedded = await connect_store(settings, run_migrations=run_migrations, create=create)
        if not embedding:
            return cls(db, None, tenant=tenant, embedded=embedded, inline_receipts=inline, settings=settings)
        try:
            if embedder is None:
                from engram.providers.factory import build_embedder

                embedder = build_embedder(settings)
            load = getattr(embedder, "load", None)
            if callable(load):
                await asyncio.to_thread(load)
            await _register(db, embedder)
            gateway = gateway_for(embedder, settings)
        except BaseException:
            await db.close()
            if embedded is not None:
                embedded.stop()
            raise
        engram = cls(db, gateway, tenant=tenant, embedded=embedded, inline_receipts=inline, settings=settings)
        try:
            await engram.follow_reads(now=True)  # started with the model a migration moved reads away from
        except BaseException:
            await engram.close()
            raise
        return engram

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` in the background (failures logged), finished before ``close`` returns."""
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("background work failed: %s", task.exception(), exc_info=task.exception())

    async def close(self) -> None:
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        buffer = getattr(self, "_buffer", None)  # the conversation buffer's client, once used
        if buffer is not None:
            await buffer.aclose()
        await self.retriever.drain()
        await self.db.close()
        if self.gateway is not None:
            await self.gateway.embedder.aclose()
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.stop)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def keyring(self) -> Keyring:
        """The vault's keys: from ENGRAM_VAULT_KEYS, else the data directory's key file (read on first use)."""
        if self._keyring is None:
            settings = self._settings or Settings()
            keys = settings.vault_keys
            self._keyring = (
                Keyring.parse(keys.get_secret_value()) if keys is not None else Keyring.from_file(settings.data_dir)
            )
        return self._keyring

    @property
    def subject_keys(self) -> SubjectKeys:
        """Users' vault data keys, in ``subject_keys_dir`` (default: the data directory's subject-keys)."""
        if self._subject_keys is None:
            settings = self._settings or Settings()
            folder = settings.subject_keys_dir or settings.data_dir / "subject-keys"
            self._subject_keys = SubjectKeys(folder, self.keyring)
        return self._subject_keys

    def _who(self, tenant: str | None, principal: Principal | None, label: str = "library") -> Principal:
        """The caller: ``principal`` (whose tenant a ``tenant`` argument must not contradict), or the trusted
        in-process caller of the tenant named."""
        metered.set(principal is not None and principal.key_id is not None)  # remote callers share the pool
        if principal is not None:
            if tenant is not None and tenant != principal.tenant_id:
                raise PermissionDenied(
                    f"this key belongs to tenant {principal.tenant_id}, not {tenant}", field="tenant"
                )
            return principal
        t = tenant or self.default_tenant
        if not t:
            raise ValidationError("a tenant is required: pass tenant=... or open Engram with one", field="tenant")
        return Principal.local(check_tenant(t), label)

    @property
    def gateway(self) -> EmbeddingGateway | None:
        return self._gateway

    @gateway.setter
    def gateway(self, value: EmbeddingGateway | None) -> None:
        self._gateway = value
        self.retriever.gateway = value

    @property
    def model_id(self) -> str | None:
        return self.gateway.model_id if self.gateway else None

    async def follow_reads(self, *, now: bool = False) -> None:
        """Embed with the model reads moved to, once an embedding model migration switched them away from this
        process's model (``engram reembed``; checked at most every ``FOLLOW_EVERY`` seconds, or ``now``): a query
        vector is never compared with vectors of another model."""
        if self.gateway is None or (not now and time.monotonic() - self._followed < FOLLOW_EVERY):
            return
        self._followed = time.monotonic()
        async with self.db.app() as conn:
            moved = await reembed_store.switched_from(conn, self.gateway.model_id)
        if moved is None:
            return
        from engram.providers.factory import build_embedder_spec

        embedder = build_embedder_spec(moved["to_spec"], self.settings)
        load = getattr(embedder, "load", None)
        if callable(load):
            await asyncio.to_thread(load)
        old, self.gateway = self.gateway, self._gateway_for(embedder)
        self.retriever.clear_query_cache()
        _log.info("reads moved from %s to %s: embedding with %s now", old.model_id, embedder.model_id, moved["to_spec"])

    def _gateway_for(self, embedder: Embedder) -> EmbeddingGateway:
        return gateway_for(embedder, self.settings)

    @property
    def settings(self) -> Settings:
        """The settings Engram was opened with (the defaults when it was given none)."""
        return self._settings or Settings()


def gateway_for(embedder: Embedder, settings: Settings) -> EmbeddingGateway:
    """The embedder behind the batching, concurrency and time limits the settings give."""
    return EmbeddingGateway(
        embedder,
        batch_size=settings.embedding_batch_size,
        max_concurrency=settings.embedding_concurrency,
        timeout=settings.embedding_timeout,
    )


async def _register(db: Database, embedder: Embedder) -> None:
    """Register the embedder's model and its indexes (as the owner), or check that ``engram migrate``
    did when the service has no owner connection."""
    if db.owner_conninfo is not None:
        async with db.owner() as conn:
            await emb.register_model(conn, embedder.model_id, embedder.dimensions)
        return
    async with db.app() as conn:
        row = await (await conn.execute(emb.MODEL_DIMENSIONS, [embedder.model_id])).fetchone()
    if row is None:
        raise MigrationError(
            f"the embedding model {embedder.model_id!r} is not registered in this database: run `engram migrate` "
            "with the same embedder settings (it registers the model as the schema owner)"
        )
    if int(row["dimensions"]) != embedder.dimensions:
        raise ValidationError(
            f"embedding model {embedder.model_id!r} is registered with {row['dimensions']} dimensions, the "
            f"embedder returns {embedder.dimensions}; give the new model a new id",
            field="embedding_model",
        )


def _uuid(value: uuid.UUID | str) -> uuid.UUID:
    return parse_uuid(value)
