"""Embedding on the write path: backpressure, failure, deferral and enrichment (SPEC 4.7)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from engram import Engram, HashingEmbedder, ProviderError
from engram.providers.base import Vector
from engram.providers.gateway import EmbeddingGateway


class Flaky:
    """A real embedder (hashing) that can be switched to fail or to hang, counting what it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.mode = "ok"
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if self.mode == "fail":
            raise ProviderError("embedding service is down")
        if self.mode == "hang":
            await asyncio.sleep(30)
        self.texts.extend(texts)
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        return None


def use(engram: Engram, flaky: Flaky, timeout: float = 5.0) -> None:
    engram.gateway = EmbeddingGateway(flaky, timeout=timeout)


async def vector_count(engram: Engram, tenant: str = "acme") -> int:
    async with engram.db.tenant(tenant) as conn:
        row = await (await conn.execute("SELECT count(*) AS n FROM memory_embeddings")).fetchone()
    assert row is not None
    return int(row["n"])


async def test_sync_write_stores_a_vector_with_its_model(engram: Engram) -> None:
    r = await engram.remember("The VPN gateway is vpn.example.org")
    assert r.embedded and r.reasons == ["created"]
    async with engram.db.tenant("acme") as conn:
        row = await (
            await conn.execute("SELECT model_id, vector_dims(embedding) AS d FROM memory_embeddings")
        ).fetchone()
    assert row == {"model_id": "engram/hashing-384", "d": 384}


async def test_failing_embedder_still_commits_and_enrichment_fills_in(engram: Engram) -> None:
    flaky = Flaky()
    use(engram, flaky)
    flaky.mode = "fail"
    r = await engram.remember("Backups run nightly at 02:00 UTC")
    assert not r.embedded and "embedding_deferred" in r.reasons
    assert (await engram.get(r.id)).content == "Backups run nightly at 02:00 UTC"
    assert await vector_count(engram) == 0
    assert await engram.embedding_backlog() == 1
    # Still down: the job is kept and backs off.
    assert await engram.enrich_pending() == 0
    assert await engram.embedding_backlog() == 1
    async with engram.db.tenant("acme") as conn:
        await conn.execute("UPDATE embedding_jobs SET not_before = now()")  # skip the back-off wait
    flaky.mode = "ok"
    assert await engram.enrich_pending() == 1
    assert await vector_count(engram) == 1
    assert await engram.embedding_backlog() == 0


async def test_embedder_timeout_defers(engram: Engram) -> None:
    flaky = Flaky()
    use(engram, flaky, timeout=0.2)
    flaky.mode = "hang"
    r = await engram.remember("Quarterly report due on the 5th")
    assert not r.embedded
    assert any(reason == "embedding_deferred" for reason in r.reasons)
    assert await engram.embedding_backlog() == 1


async def test_identical_content_is_never_embedded_twice(engram: Engram) -> None:
    flaky = Flaky()
    use(engram, flaky)
    # In three users' scopes: within one scope a repeat is merged, not stored again (docs/admission.md).
    await engram.remember_many(
        [{"content": "Same words here", "user_id": "u1"}, {"content": "Same   words here", "user_id": "u2"},
         {"content": "Other words"}]
    )  # fmt: skip
    await engram.remember("Same words here", external_id="later", user_id="u3")
    assert sorted(flaky.texts) == ["Other words", "Same words here"]
    assert await vector_count(engram) == 4


async def test_deferred_writes_are_embedded_by_the_worker(engram: Engram) -> None:
    from engram.workers.enrichment import EnrichmentWorker

    results = await engram.remember_many([{"content": f"deferred note {i}"} for i in range(30)], embed="deferred")
    assert all(not r.embedded for r in results)  # type: ignore[union-attr]
    worker = EnrichmentWorker(engram, interval=0.05)
    worker.start()
    try:
        for _ in range(100):
            if await engram.embedding_backlog() == 0:
                break
            await asyncio.sleep(0.05)
    finally:
        await worker.stop()
    assert await vector_count(engram) == 30


async def test_content_update_replaces_the_vector(engram: Engram) -> None:
    r = await engram.remember("Server room is on floor 2")
    await engram.update(r.id, {"content": "Server room is on floor 3"}, expected_revision=1)
    assert await engram.embedding_backlog() == 1
    assert await engram.enrich_pending() == 1
    async with engram.db.tenant("acme") as conn:
        row = await (await conn.execute("SELECT content_hash FROM memory_embeddings")).fetchone()
    assert row is not None and row["content_hash"] == (await engram.get(r.id)).content_hash


class Scaled(Flaky):
    """An embedder breaking the unit-length contract: its vectors are three times too long."""

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [v * 3 for v in await self.inner.embed(texts)]


async def test_vectors_are_stored_at_unit_length_whatever_the_embedder_returns(engram: Engram) -> None:
    use(engram, Scaled())
    await engram.remember_many([{"content": f"crate {n} of oranges left the harbour depot", "user_id": "u1"}
                                for n in range(6)])  # fmt: skip
    async with engram.db.tenant("acme") as conn:
        rows = await (await conn.execute("SELECT embedding FROM memory_embeddings")).fetchall()
    norms = [float(np.linalg.norm(r["embedding"].to_numpy())) for r in rows]
    assert len(norms) == 6 and all(abs(n - 1) < 1e-5 for n in norms)
    # Recall scores by inner product (``columns.COSINE``): with unit vectors, the cosines themselves.
    result = await engram.recall("oranges from the harbour", user_id="u1", preset="dense")
    assert result.plan is not None and result.plan.name == "scope-exact"
    query = (await HashingEmbedder().embed(["oranges from the harbour"]))[0]
    texts = await HashingEmbedder().embed([i.content for i in result.items])
    receipt = await engram.receipt(result.receipt_id)
    scores = {c["id"]: c["score"] for c in receipt.retrievers["dense"]}
    for item, vec in zip(result.items, texts, strict=True):
        cosine = float(np.dot(query, vec) / np.linalg.norm(query) / np.linalg.norm(vec))
        assert scores[str(item.id)] == pytest.approx(cosine, abs=1e-5)
