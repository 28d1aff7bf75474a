"""When recall embeds its query (``retrieval.gather``): an embedder computing on this process's cores embeds
before the reads start (beside them, both would share the cores); one elsewhere (an API) embeds while the
lexical side reads. Which one an embedder is, the gateway observes (``EmbeddingGateway.local``)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest

from engram import Engram
from engram.errors import ProviderError
from engram.model.recall import RecallResult
from engram.providers.base import Vector
from engram.providers.gateway import EmbeddingGateway
from engram.providers.hashing import HashingEmbedder
from engram.retrieval.config import preset
from tests.integration.test_embedding import Flaky

_BLOCK = bytes(1 << 16)


class Threaded(Flaky):
    """Computes in worker threads of this process, as a local model does (here: hashing, after burning
    ``burn`` seconds of CPU in each of two); ``fail`` makes it raise. Marks in ``events`` when each call
    starts and ends."""

    def __init__(self, events: list[str], burn: float = 0.01) -> None:
        super().__init__()
        self.events = events
        self.burn = burn
        self.fail = False

    def _work(self) -> None:
        until = time.thread_time() + self.burn
        while time.thread_time() < until:
            hashlib.sha256(_BLOCK).digest()  # hashing this much lets go of the GIL, as a model's run does

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.events.append("embed")
        loop = asyncio.get_running_loop()  # two threads, as ONNX Runtime's: still local on a busy machine
        await asyncio.gather(*(loop.run_in_executor(None, self._work) for _ in range(2)))
        self.events.append("embedded")
        if self.fail:
            raise ProviderError("the model ran out of memory")
        return await self.inner.embed(texts)


class Remote(Threaded):
    """Waits for its answer, as an API's client does."""

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.events.append("embed")
        await asyncio.sleep(0.05)
        self.events.append("embedded")
        return await self.inner.embed(texts)


def watch_reads(engram: Engram, events: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    reads = engram.db.reads

    @asynccontextmanager
    async def marked(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        events.append("reads")
        async with reads(*args, **kwargs) as conn:
            yield conn

    monkeypatch.setattr(engram.db, "reads", marked)


async def recall_twice(
    engram: Engram, embedder: Threaded, monkeypatch: pytest.MonkeyPatch
) -> tuple[RecallResult, RecallResult]:
    """A recall that caches the tenant's statistics (and shows the gateway a call), then the same recall
    embedding again, with its reads and the embedder's calls marked in ``embedder.events``."""
    await engram.remember_many([{"content": f"The crane lease invoice {n} was paid late"} for n in range(5)])
    engram.gateway = EmbeddingGateway(embedder)
    first = await engram.recall("crane lease invoice")
    watch_reads(engram, embedder.events, monkeypatch)
    engram.retriever.clear_query_cache()
    embedder.events.clear()
    return first, await engram.recall("crane lease invoice")


async def test_the_gateway_tells_an_embedder_computing_here_from_one_that_waits() -> None:
    local = EmbeddingGateway(Threaded([], burn=0.02))
    remote = EmbeddingGateway(Remote([]))
    assert local.local is False and remote.local is False  # not known before a call
    await local.embed(["a"])
    await remote.embed(["a"])
    assert local.local is True and remote.local is False
    # The event loop's own work during a call (another request, an API client's parsing) is not counted.
    loop_bound = EmbeddingGateway(HashingEmbedder())
    await loop_bound.embed(["x " * 5000])
    assert loop_bound.local is False


async def test_a_local_embedder_embeds_the_query_before_the_reads(
    engram: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    expected, result = await recall_twice(engram, Threaded(events), monkeypatch)
    assert engram.gateway is not None and engram.gateway.local
    assert events[:3] == ["embed", "embedded", "reads"] and events.count("embed") == 1
    assert [i.id for i in result.items] == [i.id for i in expected.items]
    assert [i.signals for i in result.items] == [i.signals for i in expected.items]
    assert all("cos_self" in i.signals for i in result.items) and not result.degraded


async def test_an_embedder_elsewhere_embeds_while_the_lexical_side_reads(
    engram: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    _, result = await recall_twice(engram, Remote(events), monkeypatch)
    assert engram.gateway is not None and not engram.gateway.local
    assert events.index("reads") < events.index("embedded")  # the lexical side read while it waited
    assert result.items and all("cos_self" in i.signals for i in result.items) and not result.degraded


async def test_a_local_embedder_that_fails_leaves_recall_lexical_with_its_reason(engram: Engram) -> None:
    await engram.remember_many([{"content": f"Invoice {n} reconciled by finance"} for n in range(120)])
    cfg = preset("hybrid", lexical_postings_budget=100)  # every word in more memories than the budget
    threaded = Threaded([])
    engram.gateway = EmbeddingGateway(threaded)
    hybrid = await engram.recall("reconciled invoice", config=cfg)
    assert (await engram.receipt(hybrid.receipt_id)).retrievers["lexical"] == []  # left to the dense side
    assert engram.gateway.local
    threaded.fail = True
    engram.retriever.clear_query_cache()
    degraded = await engram.recall("reconciled invoice", config=cfg)
    assert degraded.degraded and degraded.items
    assert degraded.degraded_reason and "ran out of memory" in degraded.degraded_reason
    receipt = await engram.receipt(degraded.receipt_id)
    assert receipt.degraded and len(receipt.retrievers["lexical"]) == 50 and not receipt.retrievers.get("dense")
