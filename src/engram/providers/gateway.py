"""Backpressure around any embedder: batched, bounded in concurrency, time-limited (SPEC 4.7)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import numpy as np

from engram.errors import ProviderError, ProviderTimeout
from engram.observability import metrics, tracing
from engram.providers.base import Embedder, Vector, unit

# An embedder whose calls keep other threads this busy computes here (``local``). A model run here keeps one to
# two cores busy (ONNX Runtime's threads); on a machine busy with other work it gets less of them, so the bar
# is a quarter of a core, where an API's calls keep no thread busy at all.
LOCAL_CPU_SHARE = 0.25


class EmbeddingGateway:
    """Splits work into batches, runs at most ``max_concurrency`` provider calls at once and gives up
    after ``timeout`` seconds (waiting for a slot included). Callers treat a ProviderError as "defer".
    """

    def __init__(
        self, embedder: Embedder, *, batch_size: int = 64, max_concurrency: int = 2, timeout: float = 10.0
    ) -> None:
        self.embedder = embedder
        self.batch_size = batch_size
        self.timeout = timeout
        self._slots = asyncio.Semaphore(max_concurrency)
        self.calls = 0
        self.failures = 0
        self.seconds = 0.0
        self._cpu_share: float | None = None  # other threads' CPU time over the calls' wall time, smoothed

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def dimensions(self) -> int:
        return self.embedder.dimensions

    @property
    def local(self) -> bool:
        """Whether the embedder computes on this process's cores, as observed: during its calls, threads
        other than the caller's keep a core busy at least a quarter of the time (a model run here, in its
        threads); an API's calls wait. Unknown (False) before the first call."""
        return self._cpu_share is not None and self._cpu_share >= LOCAL_CPU_SHARE

    async def _batch(self, texts: Sequence[str]) -> list[Vector]:
        async with self._slots:
            vectors = await self.embedder.embed(texts)
        if len(vectors) != len(texts):
            raise ProviderError(f"embedder returned {len(vectors)} vectors for {len(texts)} texts")
        # Unit length whatever the embedder returns: recall ranks stored vectors by inner product.
        return unit(np.asarray(vectors, dtype=np.float32))

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        with tracing.tracer().start_as_current_span(
            "engram.embed", attributes={"engram.model": self.model_id, "engram.texts": len(texts)}
        ):
            return await self._embed(texts)

    async def _embed(self, texts: Sequence[str]) -> list[Vector]:
        started, cpu = time.perf_counter(), time.process_time() - time.thread_time()
        self.calls += 1
        chunks = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        batches: list[asyncio.Task[list[Vector]]] = []
        try:
            async with asyncio.timeout(self.timeout):
                batches = [asyncio.create_task(self._batch(c)) for c in chunks]
                parts = await asyncio.gather(*batches)
        except TimeoutError as exc:
            self.failures += 1
            metrics.EMBED_FAILURES.labels(self.model_id).inc()
            raise ProviderTimeout(
                f"embedding {len(texts)} texts with {self.model_id} took longer than {self.timeout}s"
            ) from exc
        except ProviderError:
            self.failures += 1
            metrics.EMBED_FAILURES.labels(self.model_id).inc()
            raise
        except Exception as exc:
            self.failures += 1
            metrics.EMBED_FAILURES.labels(self.model_id).inc()
            raise ProviderError(f"embedder {self.model_id} failed: {exc}") from exc
        finally:
            # gather() leaves the other batches running when one fails: stop them, so a failed call does
            # not keep sending requests to a struggling provider or hold slots the next call needs.
            for batch in batches:
                batch.cancel()
            self.seconds += time.perf_counter() - started
        wall = time.perf_counter() - started
        metrics.EMBED_SECONDS.labels(self.model_id).observe(wall)
        share = (time.process_time() - time.thread_time() - cpu) / max(wall, 1e-9)
        self._cpu_share = share if self._cpu_share is None else 0.8 * self._cpu_share + 0.2 * share
        return [v for part in parts for v in part]
