"""The library API: everything else (REST, CLI, MCP, workers) calls this.

>>> async with await Engram.open(tenant="acme") as mem:           # doctest: +SKIP
...     r = await mem.remember("Invoices go out in EUR", kind="semantic", fact_key="invoice_currency")
...     await mem.get(r.id)
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from engram.config import Settings
from engram.errors import (
    ConflictError,
    EngramError,
    MigrationError,
    NotFoundError,
    ProviderError,
    RevisionConflict,
    ValidationError,
)
from engram.model import HistoryEntry, Memory, MemoryInput, MemoryPage, MemoryPatch, WriteResult, new_id
from engram.model.ids import check_tenant, parse_uuid
from engram.model.recall import RecallRequest, RecallResult, Receipt, Relation, RelationInput
from engram.model.text import content_hash
from engram.model.validation import parse
from engram.providers.base import Embedder, Vector
from engram.providers.gateway import EmbeddingGateway
from engram.retrieval import receipts
from engram.retrieval.config import RetrievalConfig
from engram.retrieval.engine import Retriever
from engram.store import embeddings as emb
from engram.store import memories as q
from engram.store.database import Conn, Database
from engram.store.embedded import EmbeddedPostgres
from engram.store.migrate import applied, available, migrate

_log = logging.getLogger(__name__)

EmbedMode = Literal["sync", "deferred"]
MemoryLike = MemoryInput | Mapping[str, Any]
MAX_BATCH = 1000


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
            async with db.owner() as conn:
                await emb.register_model(conn, embedder.model_id, embedder.dimensions)
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

    def _tenant(self, tenant: str | None) -> str:
        t = tenant or self.default_tenant
        if not t:
            raise ValidationError("a tenant is required: pass tenant=... or open Engram with one", field="tenant")
        return check_tenant(t)

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
        **fields: Any,
    ) -> WriteResult:
        """Write one memory. Raises ValidationError, IdempotencyConflict, ... on failure."""
        item: MemoryLike = {"content": content, **fields} if isinstance(content, str) else content
        result = (await self.remember_many([item], tenant=tenant, actor=actor, embed=embed))[0]
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
    ) -> list[WriteResult | EngramError]:
        """Write many memories; each item succeeds or fails on its own and gets its own result.

        With ``embed="sync"`` vectors are computed before the transaction (never twice for the same content);
        if the embedder fails or times out the memories are still committed and queued for enrichment.
        ``embed="deferred"`` queues them straight away.
        """
        tenant_id = self._tenant(tenant)
        if len(items) > MAX_BATCH:
            raise ValidationError(f"a batch holds at most {MAX_BATCH} items, got {len(items)}", field="items")
        results: list[WriteResult | EngramError | None] = [None] * len(items)
        parsed: list[tuple[int, MemoryInput]] = []
        for index, raw in enumerate(items):
            try:
                parsed.append((index, parse(MemoryInput, raw)))
            except ValidationError as exc:
                results[index] = exc
        if parsed:
            vectors, defer_reason = await self._vectors_for(tenant_id, [i for _, i in parsed], embed)
            if len(parsed) == 1:
                outcomes = [await self._write_one(tenant_id, parsed[0], vectors, defer_reason, actor)]
            else:
                try:
                    outcomes = await self._write(tenant_id, parsed, vectors, defer_reason, actor)
                except (psycopg.Error, EngramError):
                    # One bad item must not sink the batch: redo item by item, each in its own transaction.
                    outcomes = [await self._write_one(tenant_id, p, vectors, defer_reason, actor) for p in parsed]
            for out in outcomes:
                results[out.index] = self._result(out, vectors)
        missing = [i for i, r in enumerate(results) if r is None]
        assert not missing, f"items {missing} got no result"
        return [r for r in results if r is not None]

    async def _write_one(
        self, tenant_id: str, pair: tuple[int, MemoryInput], vectors: Mapping[str, Vector], reason: str, actor: str
    ) -> q.Outcome:
        try:
            return (await self._write(tenant_id, [pair], vectors, reason, actor))[0]
        except EngramError as exc:
            return q.Outcome(pair[0], uuid.UUID(int=0), False, [], error=exc)
        except psycopg.IntegrityError as exc:
            err = ConflictError(
                f"the memory conflicts with stored data ({exc.diag.constraint_name}); re-read and retry"
            )
            return q.Outcome(pair[0], uuid.UUID(int=0), False, [], error=err)

    def _result(self, out: q.Outcome, vectors: Mapping[str, Vector]) -> WriteResult | EngramError:
        if out.error is not None:
            return out.error if isinstance(out.error, EngramError) else EngramError(str(out.error))
        if out.memory is not None:  # replay: the stored row answers
            m = out.memory
            return WriteResult(
                id=m.id, revision=m.revision, status=m.status, replayed=True, reasons=out.reasons, memory=m
            )
        embedded = out.content_hash in vectors
        reasons = out.reasons if embedded else [*out.reasons, "embedding_deferred"]
        return WriteResult(
            id=out.id,
            revision=1,
            status="active",
            replayed=False,
            reasons=reasons,
            supersedes=out.supersedes,
            embedded=embedded,
        )

    async def _vectors_for(
        self, tenant_id: str, items: Sequence[MemoryInput], embed: EmbedMode
    ) -> tuple[dict[str, Vector], str]:
        """Vectors by content hash: reused from the tenant's existing rows, else computed in one batch."""
        if self.gateway is None:
            return {}, "no_embedder"
        if embed == "deferred":
            return {}, "deferred_by_caller"
        texts: dict[str, str] = {}
        for item in items:
            texts.setdefault(item.content_hash, item.content)
        async with self.db.tenant(tenant_id) as conn:
            vectors = await emb.vectors_by_hash(conn, tenant_id, self.gateway.model_id, list(texts))
        missing = [h for h in texts if h not in vectors]
        if missing:
            try:
                computed = await self.gateway.embed([texts[h] for h in missing])
            except ProviderError as exc:
                _log.warning("embedding deferred for %d texts: %s", len(missing), exc)
                return vectors, f"embedder_failed: {exc.message}"
            vectors.update(zip(missing, computed, strict=True))
        return vectors, ""

    async def _write(
        self,
        tenant_id: str,
        items: Sequence[tuple[int, MemoryInput]],
        vectors: Mapping[str, Vector],
        defer_reason: str,
        actor: str,
    ) -> list[q.Outcome]:
        journal = q.Journal()
        async with self.db.tenant(tenant_id) as conn:
            fts = await q.tenant_fts_config(conn, tenant_id)
            plain = [(i, it) for i, it in items if it.fact_key is None]
            facts = [(i, it) for i, it in items if it.fact_key is not None]
            outcomes = await q.insert_plain(conn, tenant_id, plain, fts, journal) if plain else []
            for index, item in facts:
                outcomes.append(await q.insert_fact(conn, tenant_id, index, item, fts, journal))
            by_index = dict(items)
            for out in outcomes:
                out.content_hash = by_index[out.index].content_hash
            created = [o for o in outcomes if o.created]
            if self.gateway is not None:
                model = self.gateway.model_id
                await emb.store_vectors(
                    conn, tenant_id, model, [(o.id, o.content_hash, vectors[o.content_hash]) for o in created
                                             if o.content_hash in vectors]
                )  # fmt: skip
                waiting = [o.id for o in created if o.content_hash not in vectors]
                await emb.enqueue(conn, tenant_id, model, waiting, defer_reason or "no_vector")
            in_session = [o for o in created if by_index[o.index].session_id is not None]
            await self._refresh_sessions(
                conn, tenant_id, [by_index[o.index].session_id for o in in_session], [o.id for o in in_session]
            )
            await journal.flush(conn, tenant_id, actor)
        if any(o.created and o.content_hash not in vectors for o in outcomes):
            self.work_pending.set()
        return outcomes

    async def _refresh_sessions(
        self, conn: Conn, tenant_id: str, sessions: Iterable[str | None], around: Sequence[uuid.UUID] | None = None
    ) -> None:
        """Rebuild conversational search keys and context vectors of these sessions (see 0002_retrieval.sql):
        of the memories within two positions of ``around``, or of all of them when it is None."""
        todo = sorted({s for s in sessions if s is not None})
        if not todo:
            return
        model, dims = (self.gateway.model_id, self.gateway.dimensions) if self.gateway else ("", 1)
        ids = list(around) if around is not None else None
        await conn.execute(emb.REFRESH_SESSIONS, [tenant_id, todo, model, dims, ids])
        self.retriever.note_context(tenant_id)

    # --- reads ---------------------------------------------------------------------------------------

    async def get(self, memory_id: uuid.UUID | str, *, tenant: str | None = None) -> Memory:
        tenant_id = self._tenant(tenant)
        mid = _uuid(memory_id)
        async with self.db.tenant(tenant_id) as conn:
            mem = await q.fetch_one(conn, tenant_id, mid)
        if mem is None:
            raise NotFoundError(f"memory {mid} does not exist in this tenant", field="id")
        return mem

    async def list(
        self,
        *,
        tenant: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        tags: Sequence[str] = (),
        **filters: str | None,
    ) -> MemoryPage:
        """Memories newest first, filtered by any of kind, status, user_id, agent_id, workflow_id,
        session_id, fact_key, external_id and tags (all must match)."""
        tenant_id = self._tenant(tenant)
        unknown = set(filters) - set(q.LIST_FILTERS)
        if unknown:
            raise ValidationError(
                f"unknown filter {sorted(unknown)[0]!r}; allowed: {', '.join(q.LIST_FILTERS)}, tags",
                field=sorted(unknown)[0],
            )
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        clean = {k: v for k, v in filters.items() if v is not None}
        async with self.db.tenant(tenant_id) as conn:
            items, next_cursor = await q.list_page(
                conn, tenant_id, filters=clean, tags=tags, limit=limit, cursor=cursor
            )
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def history(self, memory_id: uuid.UUID | str, *, tenant: str | None = None) -> builtins.list[HistoryEntry]:
        tenant_id = self._tenant(tenant)
        mid = _uuid(memory_id)
        async with self.db.tenant(tenant_id) as conn:
            entries = await q.history(conn, tenant_id, mid)
        if not entries:
            raise NotFoundError(f"memory {mid} does not exist in this tenant", field="id")
        return entries

    # --- changes -------------------------------------------------------------------------------------

    async def update(
        self,
        memory_id: uuid.UUID | str,
        patch: MemoryPatch | Mapping[str, Any],
        *,
        expected_revision: int,
        tenant: str | None = None,
        actor: str = "library",
    ) -> Memory:
        """Change fields of a memory. ``expected_revision`` must be its current revision, else
        RevisionConflict (re-read, re-apply, retry): concurrent edits are never lost."""
        tenant_id = self._tenant(tenant)
        mid = _uuid(memory_id)
        changes = parse(MemoryPatch, patch)
        cols = q.patch_columns(changes.changes())
        content_changed = False
        journal = q.Journal()
        async with self.db.tenant(tenant_id) as conn:
            current = await self._locked(conn, tenant_id, mid, expected_revision)
            if "content" in cols:
                cols["content_hash"] = content_hash(cols["content"])
                content_changed = cols["content_hash"] != current.content_hash
            mem = await q.update(conn, tenant_id, mid, cols)
            if content_changed and self.gateway is not None:
                await conn.execute(emb.DROP_VECTORS, [tenant_id, mid])
                await emb.enqueue(conn, tenant_id, self.gateway.model_id, [mid], "content_changed")
            if cols.keys() & {"content", "summary"}:
                await self._refresh_sessions(conn, tenant_id, [mem.session_id], [mid])
            elif "valid_from" in cols:  # the memory moved within its session: rebuild all of it
                await self._refresh_sessions(conn, tenant_id, [mem.session_id])
            journal.record(mid, "updated", "memory.updated", {"fields": sorted(changes.model_fields_set)})
            await journal.flush(conn, tenant_id, actor)
        if content_changed:
            self.work_pending.set()
        return mem

    async def archive(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
    ) -> Memory:
        """Take a memory out of service, keeping it and its history (idempotent)."""
        tenant_id = self._tenant(tenant)
        mid = _uuid(memory_id)
        journal = q.Journal()
        async with self.db.tenant(tenant_id) as conn:
            current = await self._locked(conn, tenant_id, mid, expected_revision)
            if current.status == "archived":
                return current
            mem = await q.archive(conn, tenant_id, mid)
            journal.record(mid, "archived", "memory.archived", {"previous_status": current.status})
            await journal.flush(conn, tenant_id, actor)
        return mem

    async def delete(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
    ) -> None:
        """Remove a memory with its vectors, history and relations; an audit tombstone without content stays."""
        tenant_id = self._tenant(tenant)
        mid = _uuid(memory_id)
        async with self.db.tenant(tenant_id) as conn:
            await self._locked(conn, tenant_id, mid, expected_revision)
            gone = await q.delete(conn, tenant_id, mid)
            assert gone is not None
            await self._refresh_sessions(conn, tenant_id, [gone["session_id"]])
            await q.write_audit(
                conn,
                tenant_id,
                actor,
                [("memory.deleted", mid, {"kind": gone["kind"], "revision": gone["revision"]})],
            )

    async def _locked(self, conn: Conn, tenant_id: str, mid: uuid.UUID, expected_revision: int | None) -> Memory:
        current = await q.fetch_one(conn, tenant_id, mid, for_update=True)
        if current is None:
            raise NotFoundError(f"memory {mid} does not exist in this tenant", field="id")
        if expected_revision is not None and current.revision != expected_revision:
            raise RevisionConflict(
                f"memory {mid} is at revision {current.revision}, not {expected_revision}: someone changed it "
                "first. Re-read it, re-apply your change and retry with the new revision",
                current_revision=current.revision,
            )
        return current

    # --- recall ---------------------------------------------------------------------------------------

    async def recall(
        self,
        query: str | RecallRequest | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        config: RetrievalConfig | None = None,
        query_vector: Sequence[float] | Vector | None = None,
        **fields: Any,
    ) -> RecallResult:
        """The few memories that should enter the model's context, as items and a prompt packet, with a
        stored receipt. ``config`` replaces the named preset; ``query_vector`` skips embedding the query."""
        tenant_id = self._tenant(tenant)
        data: Any = {"query": query, **fields} if isinstance(query, str) else query
        req = parse(RecallRequest, data)
        vector = np.asarray(query_vector, dtype=np.float32) if query_vector is not None else None
        return await self.retriever.recall(tenant_id, req, actor=actor, config=config, query_vector=vector)

    async def receipt(self, receipt_id: uuid.UUID | str, *, tenant: str | None = None) -> Receipt:
        tenant_id = self._tenant(tenant)
        rid = parse_uuid(receipt_id, field="receipt_id", what="receipt id")
        await self.retriever.receipts.settle()  # this process's recalls: written before they are read
        found = await self._read_receipt(tenant_id, rid)
        while found is None and _just_issued(rid):  # another process's recall: its receipt is on its way
            await asyncio.sleep(0.05)
            found = await self._read_receipt(tenant_id, rid)
        if found is None:
            raise NotFoundError(f"receipt {rid} does not exist in this tenant", field="receipt_id")
        return found

    async def _read_receipt(self, tenant_id: str, rid: uuid.UUID) -> Receipt | None:
        async with self.db.tenant(tenant_id) as conn:
            return await receipts.get(conn, tenant_id, rid)

    async def receipts_for(
        self, memory_id: uuid.UUID | str, *, tenant: str | None = None, limit: int = 50
    ) -> builtins.list[Receipt]:
        """The recalls that put this memory into a packet, newest first ("why was this used")."""
        tenant_id = self._tenant(tenant)
        await self.retriever.receipts.settle()
        async with self.db.tenant(tenant_id) as conn:
            return await receipts.for_memory(conn, tenant_id, _uuid(memory_id), limit)

    async def relate(
        self,
        relation: RelationInput | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
    ) -> Relation:
        """Add (or re-weight) a typed edge between two memories of the tenant (SPEC 8)."""
        tenant_id = self._tenant(tenant)
        rel = parse(RelationInput, relation)
        if rel.src_id == rel.dst_id:
            raise ValidationError("a relation needs two different memories", field="dst_id")
        async with self.db.tenant(tenant_id) as conn:
            for name, mid in (("src_id", rel.src_id), ("dst_id", rel.dst_id)):
                if await q.fetch_one(conn, tenant_id, mid) is None:
                    raise NotFoundError(f"memory {mid} does not exist in this tenant", field=name)
            row = await (
                await conn.execute(
                    q.UPSERT_RELATION,
                    [tenant_id, new_id(), rel.src_id, rel.dst_id, rel.type, rel.weight, Jsonb(rel.metadata)],
                )
            ).fetchone()
            assert row is not None
            await q.write_audit(
                conn,
                tenant_id,
                actor,
                [("relation.upserted", rel.src_id, {"dst_id": str(rel.dst_id), "type": rel.type})],
            )
        return Relation.model_validate(row)

    # --- enrichment ----------------------------------------------------------------------------------

    async def enrich_pending(self, *, limit: int = 256, lease_seconds: int = 60) -> int:
        """Embed memories that wait for a vector (all tenants). Returns how many got one."""
        from engram.workers.enrichment import run_once

        return await run_once(self, limit=limit, lease_seconds=lease_seconds)

    async def index_large_tenants(self, threshold: int = emb.TENANT_INDEX_THRESHOLD) -> builtins.list[str]:
        """Build a dedicated HNSW index for every tenant with at least ``threshold`` vectors (concurrently,
        writes go on). Runs periodically inside ``engram serve``; returns the tenants indexed now."""
        if self.gateway is None:
            return []
        async with self.db.owner() as conn:
            return await emb.index_large_tenants(conn, self.gateway.model_id, self.gateway.dimensions, threshold)

    async def embedding_backlog(self) -> int:
        async with self.db.app() as conn:
            row = await (await conn.execute(emb.BACKLOG)).fetchone()
        return int(row["n"]) if row else 0


async def locate_database(settings: Settings) -> tuple[str, EmbeddedPostgres | None]:
    """The conninfo to use: DATABASE_URL, or the embedded PostgreSQL (started if needed) in the data dir."""
    if settings.database_url is not None:
        return settings.database_url.get_secret_value(), None
    embedded = EmbeddedPostgres(settings.data_dir, shared_buffers=settings.embedded_shared_buffers)
    return await asyncio.to_thread(embedded.start), embedded


async def connect_store(
    settings: Settings, *, run_migrations: bool | None = None
) -> tuple[Database, EmbeddedPostgres | None]:
    """Start the embedded PostgreSQL (no DATABASE_URL) or use the external one, bring the schema up to
    date (automatically on the embedded database), and open the pool."""
    conninfo, embedded = await locate_database(settings)
    try:
        db = Database(conninfo, min_size=settings.pool_min_size, max_size=settings.pool_max_size)
        async with db.owner() as conn:
            if run_migrations if run_migrations is not None else embedded is not None:
                await migrate(conn)
            else:
                await _require_current_schema(conn)
        await db.open()
    except BaseException:
        if embedded is not None:
            embedded.stop()
        raise
    return db, embedded


async def _require_current_schema(conn: Any) -> None:
    done = await applied(conn)
    pending = [m for m in available() if m.version not in done]
    if pending:
        raise MigrationError(
            f"the database schema is behind this version of Engram ({len(pending)} migration(s) pending, "
            f"first {pending[0].version:04d}_{pending[0].name}); run `engram migrate`"
        )


RECEIPT_WAIT = 2.0  # seconds a just-issued receipt id may take to arrive from the process that issued it


def _just_issued(rid: uuid.UUID) -> bool:
    """A UUIDv7 issued less than RECEIPT_WAIT seconds ago (its first 48 bits are its Unix time in ms)."""
    return rid.version == 7 and abs(time.time() - (rid.int >> 80) / 1000) < RECEIPT_WAIT


def _uuid(value: uuid.UUID | str) -> uuid.UUID:
    return parse_uuid(value)
