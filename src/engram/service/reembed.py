"""Embedding model migration (SPEC 6.6): the new model's vectors are built beside the old ones, from a queue
that is the progress (so a run killed at any point resumes where it was, and a vector already stored is
never computed again); every memory written meanwhile, by any process, is queued too (a trigger); reads
switch in one transaction that finds no memory without its new vector while writes are held off; every
process follows within ``FOLLOW_EVERY`` seconds (``Core.follow_reads``); then the old vectors and indexes go."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from engram.errors import ConflictError, ProviderError, ValidationError
from engram.model.reembed import ReembedStatus
from engram.providers.base import Embedder
from engram.providers.factory import build_embedder_spec
from engram.providers.gateway import EmbeddingGateway
from engram.service.core import FOLLOW_EVERY, Core
from engram.store import embeddings as emb
from engram.store import reembed as store
from engram.workers.enrichment import run_once

_log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]  # (embedded so far, total to embed)
DROP_BATCH = 5000


class Reembedding(Core):
    async def reembed_status(self) -> ReembedStatus:
        """The open migration and its queue (or the state none)."""
        async with self.db.app() as conn:
            open_ = await store.open_migration(conn)
        if open_ is None:
            return ReembedStatus(state="none", from_model=self.model_id)
        async with self.db.queue() as conn:
            left = await store.remaining(conn, open_["to_model"])
        return ReembedStatus(from_model=open_["from_model"], to_model=open_["to_model"], state=open_["state"], **left)

    async def reembed(
        self, spec: str, *, batch: int = 64, progress: Progress | None = None, grace: float | None = None,
        embedder: Embedder | None = None,
    ) -> ReembedStatus:  # fmt: skip
        """Migrate every memory of every tenant to the embedder ``spec`` names (``local``, ``hashing[:DIMS]``,
        ``openai:MODEL[:DIMS]``), or resume the migration to it; ``embedder`` is that embedder, built by the
        caller. Other processes follow ``spec``. Needs the schema owner's connection."""
        new = embedder or build_embedder_spec(spec, self.settings)
        await self.follow_reads(now=True)
        if self.gateway is None:
            raise ValidationError("reembed needs Engram opened with its embedder", field="model")
        load = getattr(new, "load", None)
        if callable(load):
            await asyncio.to_thread(load)
        gateway = self._gateway_for(new)
        async with self.db.owner() as lock:  # held for the whole run; a killed run's lock goes with it
            if not await store.try_run_lock(lock):
                raise ConflictError("another `engram reembed` is running on this database", field="model")
            await emb.register_model(lock, new.model_id, new.dimensions)
            migration = await store.open_migration(lock)
            if migration is None:
                if new.model_id == self.gateway.model_id:
                    raise ValidationError(f"reads already use {new.model_id}", field="model")
                migration = await store.start(lock, self.gateway.model_id, new.model_id, spec)
            elif migration["to_model"] != new.model_id:
                raise ConflictError(
                    f"a migration to {migration['to_model']} is open: finish it first (engram reembed --model "
                    f"{migration['to_spec']})", field="model",
                )  # fmt: skip
            status = ReembedStatus(from_model=migration["from_model"], to_model=new.model_id, state=migration["state"])
            if migration["state"] == "building":
                status.embedded = await self._build(gateway, batch, progress)
                async with lock.transaction():
                    async with self.db.queue() as conn:
                        tenants = await store.tenant_ids(conn)
                    missing = await store.switch(lock, migration["id"], new.model_id, tenants)
                if missing:
                    raise ProviderError(f"{missing} memories still lack a vector of {new.model_id}: run again")
                status.state = "switched"
                self.gateway = gateway  # this process reads with the new model at once
                self.retriever.clear_query_cache()
                await asyncio.sleep(2 * FOLLOW_EVERY if grace is None else grace)  # the others follow meanwhile
            status.dropped_vectors, status.dropped_indexes = await self._drop(migration["from_model"])
            await store.finish(lock, migration["id"])
            status.state = "done"
        return status

    async def _build(self, gateway: EmbeddingGateway, batch: int, progress: Progress | None) -> int:
        """Queue every memory lacking the new model's vector, then embed the queue; how many were embedded."""
        model = gateway.model_id
        async with self.db.queue() as conn:
            await store.release(conn, model)  # leases of a run killed before (this run holds the lock)
            tenants = await store.tenant_ids(conn)
        for tenant_id in tenants:
            async with self.db.tenant(tenant_id) as conn:
                await store.enqueue(conn, tenant_id, model)
        async with self.db.queue() as conn:
            total = (await store.remaining(conn, model))["queued"]
        done = 0
        if progress:
            progress(done, total)
        while True:
            n = await run_once(self, limit=batch, lease_seconds=120, gateway=gateway)
            done += n
            if progress:
                progress(done, total)
            if n:
                continue
            async with self.db.queue() as conn:
                left = await store.remaining(conn, model)
            if left["queued"] == 0:
                return done
            if left["failing"] == left["queued"]:
                raise ProviderError(
                    f"{left['queued']} memories could not be embedded with {model}: {left['last_error']}; "
                    "fix the cause and run again (it resumes)"
                )
            await asyncio.sleep(0.5)  # failed ones wait out their backoff

    async def _drop(self, old: str) -> tuple[int, list[str]]:
        dropped = 0
        async with self.db.queue() as conn:
            tenants = await store.tenant_ids(conn)
            await store.drop_jobs(conn, old)
        for tenant_id in tenants:
            while True:
                async with self.db.tenant(tenant_id) as conn:
                    n = await store.drop_tenant_vectors(conn, tenant_id, old, DROP_BATCH)
                dropped += n
                if n < DROP_BATCH:
                    break
        async with self.db.owner() as conn:
            indexes = await store.drop_indexes(conn, old)
        _log.info("dropped %d vectors and %d indexes of %s", dropped, len(indexes), old)
        return dropped, indexes
