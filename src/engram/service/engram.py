"""The library API: everything else (REST, CLI, MCP, workers) calls this.

>>> async with await Engram.open(tenant="acme") as mem:           # doctest: +SKIP
...     r = await mem.remember("Invoices go out in EUR", kind="semantic", fact_key="invoice_currency")
...     await mem.get(r.id)

Every operation acts for a :class:`~engram.model.access.Principal`: the REST API passes the one its API key
stands for (tenant, role, bound user and agent); in process, without one, the caller is trusted as an admin
of the tenant it names (``tenant=``, or the one Engram was opened with). Authorization is decided here and
nowhere else (docs/security.md).
"""

from __future__ import annotations

import asyncio
import builtins
import time
import uuid
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import numpy as np

from engram.config import Settings
from engram.errors import EngramError, MigrationError, NotFoundError, PermissionDenied, ValidationError
from engram.model import HistoryEntry, Memory, MemoryPage, MemoryPatch, WriteResult
from engram.model.access import Action, ApiKey, KeyInput, NewKey, Principal
from engram.model.ids import check_tenant, parse_uuid
from engram.model.recall import RecallRequest, RecallResult, Receipt, Relation, RelationInput
from engram.model.tenant import TenantPatch, TenantSettings
from engram.model.validation import parse
from engram.providers.base import Embedder, Vector
from engram.providers.gateway import EmbeddingGateway
from engram.retrieval import receipts
from engram.retrieval.config import RetrievalConfig
from engram.retrieval.engine import Retriever
from engram.service import admin, changes
from engram.service.changes import not_found, sees
from engram.service.opening import connect_store
from engram.service.writes import EmbedMode, MemoryLike, remember_many
from engram.store import embeddings as emb
from engram.store import listing, relations
from engram.store import memories as q
from engram.store.database import Database, metered
from engram.store.embedded import EmbeddedPostgres


class Engram:
    """Durable, typed, tenant-isolated memory. Async; see :class:`engram.sync.EngramSync` for blocking use."""

    def __init__(
        self,
        db: Database,
        gateway: EmbeddingGateway | None,
        *,
        tenant: str | None = None,
        embedded: EmbeddedPostgres | None = None,
        inline_receipts: bool = False,
    ) -> None:
        self.db = db
        self.retriever = Retriever(db, gateway, inline_receipts=inline_receipts)
        self.gateway = gateway
        self.default_tenant = tenant
        self.embedded = embedded
        self.work_pending = asyncio.Event()  # set when memories wait for a vector
        self.key_cache = admin.KeyCache()

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
    ) -> Engram:
        """Connect (starting the embedded PostgreSQL when no DATABASE_URL is set), migrate, load the embedder.

        Migrations run automatically on the embedded database; on an external one run ``engram migrate``
        (or pass ``run_migrations=True``). ``embedding=False`` skips the embedder (for read-only tools).
        """
        settings = settings or Settings()
        inline = settings.recall_receipts == "inline"
        db, embedded = await connect_store(settings, run_migrations=run_migrations)
        if not embedding:
            return cls(db, None, tenant=tenant, embedded=embedded, inline_receipts=inline)
        try:
            if embedder is None:
                from engram.providers.factory import build_embedder

                embedder = build_embedder(settings)
            load = getattr(embedder, "load", None)
            if callable(load):
                await asyncio.to_thread(load)
            await _register(db, embedder)
            gateway = EmbeddingGateway(
                embedder,
                batch_size=settings.embedding_batch_size,
                max_concurrency=settings.embedding_concurrency,
                timeout=settings.embedding_timeout,
            )
        except BaseException:
            await db.close()
            if embedded is not None:
                embedded.stop()
            raise
        return cls(db, gateway, tenant=tenant, embedded=embedded, inline_receipts=inline)

    async def close(self) -> None:
        await self.retriever.drain()
        await self.db.close()
        if self.gateway is not None:
            await self.gateway.embedder.aclose()
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.stop)

    async def __aenter__(self) -> Engram:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

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

    # --- write path ------------------------------------------------------------------------------------

    async def remember(
        self,
        content: str | MemoryLike,
        *,
        tenant: str | None = None,
        actor: str = "library",
        embed: EmbedMode = "sync",
        principal: Principal | None = None,
        **fields: Any,
    ) -> WriteResult:
        """Write one memory. Raises ValidationError, IdempotencyConflict, ... on failure."""
        item: MemoryLike = {"content": content, **fields} if isinstance(content, str) else content
        who = self._who(tenant, principal, actor)
        result = (await remember_many(self, who, [item], embed, batch=False))[0]
        if isinstance(result, EngramError):
            raise result
        return result

    async def remember_many(
        self,
        items: Sequence[MemoryLike],
        *,
        tenant: str | None = None,
        actor: str = "library",
        embed: EmbedMode = "sync",
        principal: Principal | None = None,
    ) -> list[WriteResult | EngramError]:
        """Write many memories; each item succeeds or fails on its own and gets its own result (an error
        names its field as ``items[i].field``).

        With ``embed="sync"`` vectors are computed before the transaction (never twice for the same content);
        if the embedder fails or times out the memories are still committed and queued for enrichment.
        ``embed="deferred"`` queues them straight away.
        """
        return await remember_many(self, self._who(tenant, principal, actor), items, embed, batch=True)

    # --- reads ---------------------------------------------------------------------------------------

    async def get(
        self,
        memory_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Memory:
        """One memory. ``user_id``, ``agent_id``, ``workflow_id``: whom an agent reads it as (a ``user``
        memory shows only to its user, see docs/security.md)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        mid = _uuid(memory_id)
        async with self.db.tenant(who.tenant_id) as conn:
            mem = await q.fetch_one(conn, who.tenant_id, mid)
        if mem is None or not sees(who, acting, mem):
            raise not_found(mid)
        return mem

    async def list(
        self,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        limit: int = 50,
        cursor: str | None = None,
        tags: Sequence[str] = (),
        **filters: str | None,
    ) -> MemoryPage:
        """Memories newest first, filtered by any of kind, status, user_id, agent_id, workflow_id,
        session_id, fact_key, external_id and tags (all must match); an agent sees only what it may (its
        user_id, agent_id and workflow_id filters are also whom it acts as)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        unknown = set(filters) - set(listing.LIST_FILTERS)
        if unknown:
            raise ValidationError(
                f"unknown filter {sorted(unknown)[0]!r}; allowed: {', '.join(listing.LIST_FILTERS)}, tags",
                field=sorted(unknown)[0],
            )
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        clean = {k: v for k, v in filters.items() if v is not None}
        for name in ("user_id", "agent_id"):
            if name in clean:
                who.bound(clean[name], name)
        acting = None
        if not who.sees_all:
            acting = who.acting(
                user_id=clean.get("user_id"), agent_id=clean.get("agent_id"), workflow_id=clean.get("workflow_id")
            )
        async with self.db.tenant(who.tenant_id) as conn:
            items, next_cursor = await listing.list_page(
                conn, who.tenant_id, filters=clean, tags=tags, limit=limit, cursor=cursor, acting=acting
            )
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def history(
        self,
        memory_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> builtins.list[HistoryEntry]:
        """Every revision of a memory the caller may see, as full snapshots."""
        who = self._who(tenant, principal)
        mem = await self.get(memory_id, principal=who, user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        async with self.db.tenant(who.tenant_id) as conn:
            return await listing.history(conn, who.tenant_id, mem.id)

    # --- changes -------------------------------------------------------------------------------------

    async def update(
        self,
        memory_id: uuid.UUID | str,
        patch: MemoryPatch | Mapping[str, Any],
        *,
        expected_revision: int,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Memory:
        """Change fields of a memory. ``expected_revision`` must be its current revision, else
        RevisionConflict (re-read, re-apply, retry): concurrent edits are never lost. A superseded or
        deleted memory cannot change (NotCurrent names the current one)."""
        who = self._who(tenant, principal, actor)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        return await changes.update(self, who, acting, _uuid(memory_id), parse(MemoryPatch, patch), expected_revision)

    async def archive(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Memory:
        """Take a memory out of service, keeping it and its history (idempotent)."""
        who = self._who(tenant, principal, actor)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        return await changes.archive(self, who, acting, _uuid(memory_id), expected_revision)

    async def unarchive(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> Memory:
        """Put an archived memory back in service (reviewer or admin)."""
        who = self._who(tenant, principal, actor)
        return await changes.unarchive(self, who, who.acting(), _uuid(memory_id), expected_revision)

    async def delete(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> None:
        """Remove a memory with its vectors, history and relations (reviewer or admin); an audit tombstone
        without content stays, and its fact's chain is mended (docs/architecture.md)."""
        who = self._who(tenant, principal, actor)
        await changes.delete(self, who, who.acting(), _uuid(memory_id), expected_revision)

    # --- recall ---------------------------------------------------------------------------------------

    async def recall(
        self,
        query: str | RecallRequest | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        config: RetrievalConfig | None = None,
        query_vector: Sequence[float] | Vector | None = None,
        **fields: Any,
    ) -> RecallResult:
        """The few memories that should enter the model's context, as items and a prompt packet, with a
        stored receipt. ``config`` replaces the named preset; ``query_vector`` skips embedding the query."""
        who = self._who(tenant, principal, actor)
        who.require(Action.READ)
        data: Any = {"query": query, **fields} if isinstance(query, str) else query
        req = parse(RecallRequest, data)
        user, agent = who.bound(req.user_id, "user_id"), who.bound(req.agent_id, "agent_id")
        if (user, agent) != (req.user_id, req.agent_id):
            req = req.model_copy(update={"user_id": user, "agent_id": agent})
        vector = np.asarray(query_vector, dtype=np.float32) if query_vector is not None else None
        return await self.retriever.recall(who.tenant_id, req, who=who, config=config, query_vector=vector)

    async def receipt(
        self,
        receipt_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        user_id: str | None = None,
    ) -> Receipt:
        """A recall's receipt. An agent reads only those of the user it acts as (``user_id``)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        acting = who.acting(user_id=user_id)
        rid = parse_uuid(receipt_id, field="receipt_id", what="receipt id")
        await self.retriever.receipts.settle()  # this process's recalls: written before they are read
        found = await self._read_receipt(who.tenant_id, rid)
        while found is None and _just_issued(rid):  # another process's recall: its receipt is on its way
            await asyncio.sleep(0.05)
            found = await self._read_receipt(who.tenant_id, rid)
        if found is None or not (who.may(Action.ALL_RECEIPTS) or found.principal.get("user_id") == acting.user_id):
            raise NotFoundError(
                f"receipt {rid} does not exist in this tenant (or is not one of the user this key acts as)",
                field="receipt_id",
            )
        return found

    async def _read_receipt(self, tenant_id: str, rid: uuid.UUID) -> Receipt | None:
        async with self.db.tenant(tenant_id) as conn:
            return await receipts.get(conn, tenant_id, rid)

    async def receipts_for(
        self,
        memory_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        limit: int = 50,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> builtins.list[Receipt]:
        """The recalls that put this memory into a packet, newest first ("why was this used"). An agent sees
        only the recalls of the user it acts as."""
        who = self._who(tenant, principal)
        mem = await self.get(memory_id, principal=who, user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        only_user = not who.may(Action.ALL_RECEIPTS)
        acting_user = who.acting(user_id=user_id).user_id
        await self.retriever.receipts.settle()
        async with self.db.tenant(who.tenant_id) as conn:
            return await receipts.for_memory(conn, who.tenant_id, mem.id, limit, only_user=only_user, user=acting_user)

    async def relate(
        self,
        relation: RelationInput | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Relation:
        """Add (or re-weight) a typed edge between two memories the caller may see (SPEC 8)."""
        who = self._who(tenant, principal, actor)
        who.require(Action.WRITE)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        rel = parse(RelationInput, relation)
        if rel.src_id == rel.dst_id:
            raise ValidationError("a relation needs two different memories", field="dst_id")
        async with self.db.tenant(who.tenant_id) as conn:
            for name, mid in (("src_id", rel.src_id), ("dst_id", rel.dst_id)):
                mem = await q.fetch_one(conn, who.tenant_id, mid)
                if mem is None or not sees(who, acting, mem):
                    raise NotFoundError(f"memory {mid} does not exist in this tenant", field=name)
            made = await relations.upsert(conn, who.tenant_id, rel)
            await q.write_audit(
                conn,
                who.tenant_id,
                who.actor,
                [("relation.upserted", rel.src_id, {"dst_id": str(rel.dst_id), "type": rel.type})],
            )
        return made

    # --- keys and tenant settings ----------------------------------------------------------------------

    async def authenticate(self, key: str) -> Principal:
        """The principal an API key stands for (its tenant, role and binding); AuthenticationError if the
        key is unknown or revoked. Cached for a few seconds."""
        return await admin.authenticate(self, key)

    async def create_key(
        self,
        spec: KeyInput | Mapping[str, Any] | None = None,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> NewKey:
        """A new API key of the tenant (admin): role, name, and optionally the user and agent it is bound
        to. The secret is in the result, once."""
        return await admin.create_key(self, self._who(tenant, principal), parse(KeyInput, spec or fields))

    async def list_keys(
        self, *, tenant: str | None = None, principal: Principal | None = None
    ) -> builtins.list[ApiKey]:
        return await admin.list_keys(self, self._who(tenant, principal))

    async def revoke_key(
        self, key_id: uuid.UUID | str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> ApiKey:
        """Revoke a key: at once in this process, within 10 seconds in others."""
        return await admin.revoke_key(self, self._who(tenant, principal), key_id)

    async def tenant_settings(self, *, tenant: str | None = None, principal: Principal | None = None) -> TenantSettings:
        return await admin.tenant_settings(self, self._who(tenant, principal))

    async def update_tenant(
        self,
        patch: TenantPatch | Mapping[str, Any],
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> TenantSettings:
        """Change the tenant's settings (admin); a new ``fts_config`` indexes every memory again."""
        return await admin.update_tenant(self, self._who(tenant, principal), parse(TenantPatch, patch))

    # --- enrichment and upkeep --------------------------------------------------------------------------

    async def enrich_pending(self, *, limit: int = 256, lease_seconds: int = 60) -> int:
        """Embed memories that wait for a vector (all tenants, leased fairly). Returns how many got one."""
        from engram.workers.enrichment import run_once

        return await run_once(self, limit=limit, lease_seconds=lease_seconds)

    async def index_large_tenants(self, threshold: int = emb.TENANT_INDEX_THRESHOLD) -> builtins.list[str]:
        """Build a dedicated HNSW index for every tenant with at least ``threshold`` vectors (concurrently,
        writes go on). Runs periodically inside ``engram serve``; returns the tenants indexed now. Needs
        the owner's connection (and an owner not held to row-level security, as the embedded one is)."""
        if self.gateway is None or self.db.owner_conninfo is None:
            return []
        async with self.db.owner() as conn:
            return await emb.index_large_tenants(conn, self.gateway.model_id, self.gateway.dimensions, threshold)

    async def embedding_backlog(self) -> int:
        async with self.db.queue() as conn:
            row = await (await conn.execute(emb.BACKLOG)).fetchone()
        return int(row["n"]) if row else 0

    async def analyze(self) -> None:
        """Refresh the planner's statistics of the recall tables (what autovacuum does after a bulk load)."""
        from engram.retrieval.candidates import ANALYZE_RECALL_TABLES

        async with self.db.owner() as conn:
            await conn.execute(ANALYZE_RECALL_TABLES)


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


RECEIPT_WAIT = 2.0  # seconds a just-issued receipt id may take to arrive from the process that issued it
CLOCK_SKEW = 0.25  # seconds another process's clock may be ahead of this one's


def _just_issued(rid: uuid.UUID) -> bool:
    """A UUIDv7 issued less than RECEIPT_WAIT seconds ago (its first 48 bits are its Unix time in ms); one
    from the future was never issued by anybody, and is not waited for."""
    age = time.time() - (rid.int >> 80) / 1000
    return rid.version == 7 and -CLOCK_SKEW <= age < RECEIPT_WAIT


def _uuid(value: uuid.UUID | str) -> uuid.UUID:
    return parse_uuid(value)
