"""Enrichment: give a vector to every memory that was committed without one.

Jobs are leased across tenants, fairly (``store.embeddings.CLAIM``: ids only, SKIP LOCKED), then each
tenant's memories are read and written under that tenant's row-level security. A crashed worker's
lease simply expires; a failed batch backs off exponentially (at most 5 minutes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from typing import TYPE_CHECKING

import psycopg

from engram.errors import EngramError, ProviderError
from engram.service.writes import refresh_sessions
from engram.store import embeddings as emb
from engram.workers.loop import Loop

if TYPE_CHECKING:
    import uuid

    from engram.providers.gateway import EmbeddingGateway
    from engram.service.admin import Administration
    from engram.service.core import Core

_log = logging.getLogger(__name__)


async def run_once(
    engram: Core, *, limit: int = 256, lease_seconds: int = 60, gateway: EmbeddingGateway | None = None
) -> int:
    """Lease up to ``limit`` due jobs of the model of ``gateway`` (default: the one Engram embeds with) and
    embed them. Returns the number of memories that got a vector."""
    gateway = gateway or engram.gateway
    if gateway is None:
        return 0
    model = gateway.model_id
    async with engram.db.queue() as conn:
        params = {"model_id": model, "limit": limit, "lease": lease_seconds}
        rows = await (await conn.execute(emb.CLAIM, params)).fetchall()
    by_tenant: dict[str, list[uuid.UUID]] = defaultdict(list)
    for r in rows:
        by_tenant[r["tenant_id"]].append(r["memory_id"])
    done = 0
    for tenant_id, ids in by_tenant.items():
        done += await _embed_tenant(engram, tenant_id, ids, gateway)
    return done


async def _embed_tenant(engram: Core, tenant_id: str, ids: list[uuid.UUID], gateway: EmbeddingGateway) -> int:
    model = gateway.model_id
    async with engram.db.tenant(tenant_id) as conn:
        items = await (await conn.execute(emb.JOB_ITEMS, [tenant_id, model, ids])).fetchall()
        known = await emb.vectors_by_hash(conn, tenant_id, model, [i["content_hash"] for i in items])
    texts = {i["content_hash"]: i["content"] for i in items if i["content_hash"] not in known}
    try:
        computed = await gateway.embed(list(texts.values())) if texts else []
    except ProviderError as exc:
        async with engram.db.tenant(tenant_id) as conn:
            await conn.execute(emb.FAIL, [exc.message[:500], tenant_id, model, ids])
        _log.warning("enrichment of %d memories in tenant %s failed: %s", len(ids), tenant_id, exc)
        return 0
    vectors = {**known, **dict(zip(texts, computed, strict=True))}
    stored: list[uuid.UUID] = []
    async with engram.db.tenant(tenant_id) as conn:
        async with conn.cursor() as cur:
            params = [
                {
                    "model_id": model,
                    "embedding": vectors[i["content_hash"]],
                    "tenant_id": tenant_id,
                    "memory_id": i["id"],
                    "content_hash": i["content_hash"],
                }
                for i in items
            ]
            if params:
                await cur.executemany(emb.UPSERT_VECTOR_IF_CURRENT, params, returning=True)
                while True:
                    row = await cur.fetchone()
                    if row is not None:
                        stored.append(row["memory_id"])
                    if not cur.nextset():
                        break
        # Jobs whose memory vanished (deleted) cascade away; jobs whose content changed stay queued.
        await conn.execute(emb.COMPLETE, [tenant_id, model, stored])
        done = set(stored)
        in_session = [i for i in items if i["id"] in done and i["session_id"] is not None]
        await refresh_sessions(
            engram, conn, tenant_id, [i["session_id"] for i in in_session], [i["id"] for i in in_session], gateway
        )
    return len(stored)


class EnrichmentWorker(Loop):
    """Runs ``run_once`` in a loop inside ``engram serve`` (and ``engram worker``)."""

    task_name = "engram-enrichment"

    def __init__(
        self, engram: Administration, *, interval: float = 1.0, batch: int = 256, maintenance_every: float = 600.0
    ) -> None:
        self.engram = engram
        self.interval = interval
        self.batch = batch
        self.maintenance_every = maintenance_every
        self._next_maintenance = time.monotonic() + 60.0
        self.processed = 0

    async def _loop(self) -> None:
        while True:
            try:
                n = await run_once(self.engram, limit=self.batch)
                self.processed += n
            except (EngramError, OSError) as exc:
                _log.warning("enrichment pass failed: %s", exc)
                n = 0
            if n == 0 and time.monotonic() >= self._next_maintenance:
                self._next_maintenance = time.monotonic() + self.maintenance_every
                try:
                    indexed = await self.engram.index_large_tenants()
                    if indexed:
                        _log.info("built dedicated vector indexes for tenants %s", indexed)
                except (EngramError, OSError, psycopg.Error) as exc:
                    _log.warning("index maintenance failed: %s", exc)
            if n == 0:
                self.engram.work_pending.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.engram.work_pending.wait(), self.interval)
