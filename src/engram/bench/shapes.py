"""`engram bench recall --shape users|one-scope`: recall inside one large tenant (``facts``).

``users``: one tenant, every fact owned by one of 1,000 users; each query recalls as its gold fact's user.
``one-scope``: one tenant holding every fact with no user; each query sees all of them.

Vectors: the first ``REAL_VECTORS`` facts are embedded once with the configured model and cached in the
per-user cache directory (one file per model, shared by every shape and size); facts past them get
synthetic vectors (a real one, moved by noise, made unit length again), so that a million-memory curve
measures the database, not the embedder. The real-vector facts (every gold fact among them) go through
``remember_many`` with an embedder that looks the vectors up (``VectorBook``); the synthetic rest is loaded
in bulk (``store.bulk``). Questions are embedded by the real model. The database is kept in ``data_dir`` and
reused by the next run of the same shape and size.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from engram.bench.facts import Facts, make_facts
from engram.bench.recall import latency_stats, machine_baseline
from engram.config import Settings
from engram.errors import EngramError
from engram.model import new_id
from engram.model.text import content_hash
from engram.providers.base import Embedder, Vector
from engram.providers.factory import build_embedder
from engram.service import Engram
from engram.store import bulk

SHAPES = ("users", "one-scope")
TENANT = {"users": "users", "one-scope": "one"}
REAL_VECTORS = 100_000
CHUNK = 1000
BULK = 10_000
# The bench measures recall, not admission: names are the facts (no PII masking), nothing waits for a
# reviewer, and the facts are distinct by construction, so the near-duplicate search and the injection
# classifier would only add to the ingest time.
POLICY: dict[str, Any] = {"pii": "off", "approval": "off", "deduplicate": [], "injection_classifier": False}


class VectorBook:
    """An embedder that looks texts up in a table of precomputed vectors, and asks ``inner`` for the rest."""

    def __init__(self, inner: Embedder, texts: Sequence[str], vectors: np.ndarray[Any, Any]) -> None:
        self.inner = inner
        self.at = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    async def aclose(self) -> None:
        await self.inner.aclose()

    def release(self) -> None:
        """Forget the table (every text is then asked of ``inner``)."""
        self.at = {}
        self.vectors = np.zeros((0, self.inner.dimensions), dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        found: list[Vector | None] = [self.vectors[i] if (i := self.at.get(t)) is not None else None for t in texts]
        missing = [t for t, v in zip(texts, found, strict=True) if v is None]
        if missing:
            self.misses += len(missing)
            fresh = iter(await self.inner.embed(missing))
            found = [v if v is not None else next(fresh) for v in found]
        return [v for v in found if v is not None]


async def fact_vectors(inner: Embedder, facts: Facts, real: int, cache: Path) -> np.ndarray[Any, Any]:
    """Real vectors for the first ``real`` facts, synthetic ones for the rest. The real ones are kept in
    ``cache`` and extended as larger runs need more (the first k facts are the same at every size)."""
    real = min(real, len(facts.docs))
    vectors = _load(cache)
    if vectors is None:
        vectors = np.zeros((0, inner.dimensions), dtype=np.float32)
    if len(vectors) < real:
        parts = [vectors]
        for start in range(len(vectors), real, 2048):
            batch = facts.docs[start : min(start + 2048, real)]
            parts.append(np.asarray(await inner.embed(batch), dtype=np.float32))
        vectors = np.concatenate(parts)
        np.save(cache, vectors)
    vectors = vectors[:real]
    extra = len(facts.docs) - real
    if extra <= 0:
        return vectors
    rng = np.random.default_rng(11)
    noise = rng.normal(0, 0.05, (extra, vectors.shape[1])).astype(np.float32)
    synthetic = vectors[rng.integers(0, real, extra)] + noise
    synthetic /= np.linalg.norm(synthetic, axis=1, keepdims=True)
    return np.concatenate([vectors, synthetic.astype(np.float32)])


def _load(path: Path) -> np.ndarray[Any, Any] | None:
    return np.load(path) if path.exists() else None


@dataclass
class Point:
    """One shape at one size, its database open and built."""

    engram: Engram
    shape: str
    memories: int
    asks: list[tuple[str, str | None, str]]  # each question, the user it is asked as, its gold fact's id
    ingest_s: float
    model: str


@asynccontextmanager
async def opened(
    shape: str, *, memories: int = 100_000, queries: int = 200, data_dir: Path | None = None,
    settings: Settings | None = None, real_vectors: int = REAL_VECTORS, vectors_dir: Path | None = None,
) -> AsyncIterator[Point]:  # fmt: skip
    """One shape at one size, its database built on first use and kept in ``data_dir`` (default: the
    per-user cache directory); ``vectors_dir`` holds the real vectors' cache (default: the same, so every
    shape and size shares one)."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}")
    data_dir = data_dir or Path(platformdirs.user_cache_dir("engram")) / f"bench-{shape}-{memories}"
    data_dir.mkdir(parents=True, exist_ok=True)
    base = settings or Settings()
    inner = build_embedder(base)
    facts = make_facts(memories, real=real_vectors, queries=queries)
    real = min(memories, real_vectors)
    marker = data_dir / "bench-facts.json"
    book = None
    if not marker.exists():  # the facts' vectors are wanted for the ingestion only
        model = inner.model_id.replace("/", "_")
        cache = (vectors_dir or Path(platformdirs.user_cache_dir("engram"))) / f"bench-facts-v3-{model}.npy"
        cache.parent.mkdir(parents=True, exist_ok=True)
        book = VectorBook(inner, facts.docs, await fact_vectors(inner, facts, real, cache))
    engram = await Engram.open(
        # A loader's statements (10,000 rows into a growing graph) outlast a service's time limit.
        base.model_copy(
            update={"data_dir": data_dir, "database_url": None, "embedding_timeout": 600.0, "statement_timeout": 600.0}
        ),
        embedder=book or inner,
    )
    tenant = TENANT[shape]
    try:
        ingest_s = 0.0
        if book is not None:
            if (await engram.list(tenant=tenant, limit=1)).items:
                raise RuntimeError(f"{data_dir} holds a partial ingestion: delete it and run again")
            started = time.perf_counter()
            gold = await _ingest(engram, shape, facts, book, real)
            ingest_s = time.perf_counter() - started
            await engram.index_large_tenants()  # what engram serve's maintenance does within minutes
            async with engram.db.owner() as conn:
                await conn.execute("VACUUM (ANALYZE) memories, memory_embeddings, search_postings, recall_receipts")
            marker.write_text(json.dumps({"gold": gold, "ingest_seconds": round(ingest_s, 1)}))
            book.release()
        gold = json.loads(marker.read_text())["gold"]
        users = shape == "users"
        asks = [(q, facts.users[i] if users else None, gold[str(i)]) for q, i in facts.queries]
        # A service does not hold its memories' texts: measured beside a million of them, the process's one
        # full garbage collection in 400 recalls took 368 ms (docs/performance.md).
        del facts
        yield Point(engram, shape, memories, asks, ingest_s, inner.model_id)
    finally:
        await engram.close()


async def run_shape_bench(
    shape: str, *, memories: int = 100_000, queries: int = 200, data_dir: Path | None = None,
    settings: Settings | None = None, real_vectors: int = REAL_VECTORS, vectors_dir: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One shape at one size (``opened``), measured alone."""
    async with opened(
        shape, memories=memories, queries=queries, data_dir=data_dir, settings=settings, real_vectors=real_vectors,
        vectors_dir=vectors_dir,
    ) as point:  # fmt: skip
        sampler = Sampler(point)
        await sampler.prepare()
        everything = range(len(sampler.asks))
        await sampler.given(everything)
        await sampler.embedded(everything)
        return {"shape": shape, "memories": memories, **sampler.result(), **await machine_baseline(point.engram),
                "ingest_seconds": round(point.ingest_s, 1), "embedding_model": point.model}  # fmt: skip


async def _ingest(engram: Engram, shape: str, facts: Facts, book: VectorBook, real: int) -> dict[str, str]:
    """Every fact, in chunks; returns the ids of the gold facts (by fact index). The first ``real`` facts
    (every gold one among them) go through ``remember_many``; the synthetic rest is loaded in bulk
    (``store.bulk``: the write path runs at a few hundred to a thousand memories a second here)."""
    tenant = TENANT[shape]
    await engram.update_admission_policy(POLICY, tenant=tenant)
    wanted = {i for _, i in facts.queries}
    gold: dict[str, str] = {}
    for start in range(0, real, CHUNK):
        items: list[dict[str, Any]] = [
            {"content": d, **({"user_id": u} if shape == "users" else {})}
            for d, u in zip(facts.docs[start : min(start + CHUNK, real)], facts.users[start:real], strict=False)
        ]
        results = await engram.remember_many(items, tenant=tenant, actor="bench")
        for offset, r in enumerate(results):
            if isinstance(r, EngramError):
                raise r
            if start + offset in wanted:
                gold[str(start + offset)] = str(r.id)
    for start in range(real, len(facts.docs), BULK):
        end = min(start + BULK, len(facts.docs))
        contents = facts.docs[start:end]
        async with engram.db.tenant(tenant) as conn:
            await bulk.load(
                conn, tenant, book.model_id, ids=[new_id() for _ in contents],
                users=facts.users[start:end] if shape == "users" else [None] * len(contents), contents=contents,
                hashes=[content_hash(c) for c in contents], vectors=book.vectors[start:end],
            )  # fmt: skip
    return gold


class Sampler:
    """A point's recalls, measured a block of questions at a time, so that several points can take turns
    (``scale``): each question recalled as its gold fact's user (users) or with no user (one-scope), top 5,
    first with its vector given, then paying for its embedding."""

    def __init__(self, point: Point) -> None:
        self.point = point
        self.asks = point.asks
        self.vectors: list[Vector] = []
        self.given_ms: dict[int, float] = {}
        self.embedded_ms: dict[int, float] = {}
        self.hits: dict[int, bool] = {}
        self.plans: dict[int, str] = {}
        self.sizes: dict[int, int] = {}

    async def _recall(self, q: str, user: str | None, vector: Vector | None) -> Any:
        return await self.point.engram.recall(
            q, tenant=TENANT[self.point.shape], user_id=user, actor="bench", max_items=5, query_vector=vector
        )

    async def prepare(self) -> None:
        """Embed the questions, and recall each once untimed: statistics cached, statements prepared."""
        gateway = self.point.engram.gateway
        assert gateway is not None
        self.vectors = await gateway.embed([q for q, _, _ in self.asks])
        for (q, user, _), vec in zip(self.asks, self.vectors, strict=True):
            await self._recall(q, user, vec)

    async def given(self, which: Iterable[int]) -> None:
        """Recall these questions with their vectors given."""
        for i in which:
            q, user, want = self.asks[i]
            started = time.perf_counter()
            result = await self._recall(q, user, self.vectors[i])
            self.given_ms[i] = (time.perf_counter() - started) * 1000
            self.hits[i] = any(str(item.id) == want for item in result.items)
            plan = getattr(result, "plan", None)
            self.plans[i] = plan.name if plan else "unknown"
            if plan is not None and plan.scope_size is not None:
                self.sizes[i] = plan.scope_size

    async def embedded(self, which: Iterable[int]) -> None:
        """Recall these questions, each paying for its embedding."""
        for i in which:
            q, user, _ = self.asks[i]
            self.point.engram.retriever.clear_query_cache()
            started = time.perf_counter()
            await self._recall(q, user, None)
            self.embedded_ms[i] = (time.perf_counter() - started) * 1000

    def reset(self) -> None:
        """Forget the timings, for another pass over the same questions."""
        self.given_ms.clear()
        self.embedded_ms.clear()

    def result(self) -> dict[str, Any]:
        return {
            "queries": len(self.asks),
            **latency_stats(self.given_ms.values()),
            **latency_stats(self.embedded_ms.values(), "_with_embedding"),
            "hit_at_5": round(sum(self.hits.values()) / len(self.asks), 4),
            "scope_size_p50": statistics.median(self.sizes.values()) if self.sizes else None,
            "plan_counts": dict(Counter(self.plans.values())),
        }
