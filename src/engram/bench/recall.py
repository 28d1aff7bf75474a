"""`engram bench recall`: recall latency at scale and filtered dense recall against exact search.

Data: ``memories`` synthetic memories (embedded with the configured model) across ``tenants`` tenants with
a skewed (Zipf-like) size distribution, plus one tenant holding ``big_share`` of all rows. The database is
kept in ``data_dir`` (default: a per-user cache directory), so a second run skips the ingestion.

Queries pick a tenant with probability proportional to its size (busy tenants ask more), act as one of its
users, and ask about one of its memories in other words (a shuffled fragment).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from engram.bench.texts import memory_texts
from engram.config import Settings
from engram.errors import EngramError
from engram.evaluation.metrics import percentile
from engram.evaluation.runner import settle
from engram.model.recall import RecallPlan, RecallRequest
from engram.retrieval import scope
from engram.retrieval.config import PRESETS
from engram.retrieval.filter import build_filter
from engram.retrieval.gather import recall_settings
from engram.retrieval.retrievers import dense
from engram.retrieval.retrievers.base import Search
from engram.service import Engram

BIG = "bench-big"
USERS_PER_TENANT = 5


def tenant_sizes(memories: int, tenants: int, big_share: float, seed: int = 5) -> dict[str, int]:
    big = int(memories * big_share)
    rest = memories - big
    rng = random.Random(seed)
    weights = [1.0 / (rank**1.1) * rng.uniform(0.5, 1.5) for rank in range(1, tenants)]
    total = sum(weights)
    sizes = {f"bench-t{i:04d}": max(1, int(rest * w / total)) for i, w in enumerate(weights)}
    shortfall = rest - sum(sizes.values())
    names = list(sizes)
    for i in range(abs(shortfall)):
        name = names[i % len(names)]
        if shortfall > 0:
            sizes[name] += 1
        elif sizes[name] > 1:
            sizes[name] -= 1
    sizes[BIG] = big
    return sizes


async def ingest(engram: Engram, sizes: dict[str, int], *, seed: int = 17) -> dict[str, list[str]]:
    """Write every tenant's memories (embedding deferred, then settled in large batches)."""
    texts = memory_texts(sum(sizes.values()), seed=seed)
    by_tenant: dict[str, list[str]] = {}
    at = 0
    for tenant, size in sizes.items():
        mine = texts[at : at + size]
        at += size
        by_tenant[tenant] = mine
        for start in range(0, size, 1000):
            chunk = mine[start : start + 1000]
            items = [
                {"content": t, "user_id": f"u{(start + i) % USERS_PER_TENANT}",
                 "visibility": "tenant" if (start + i) % 4 == 0 else "user", "kind": "episodic"}
                for i, t in enumerate(chunk)
            ]  # fmt: skip
            results = await engram.remember_many(items, tenant=tenant, actor="bench", embed="deferred")
            failed = [r for r in results if isinstance(r, EngramError)]
            if failed:
                raise failed[0]
    await settle(engram)
    return by_tenant


def query_from(text: str, rng: random.Random) -> str:
    """Another way of asking about a memory: a fragment of its words, reordered."""
    words = [w.strip(".,;:()[]") for w in text.split() if not w.startswith(("(ref", "["))]
    words = [w for w in words if w]
    n = min(len(words), rng.randint(4, 8))
    start = rng.randint(0, max(0, len(words) - n))
    fragment = words[start : start + n]
    rng.shuffle(fragment)
    return " ".join(fragment)


async def run_recall_bench(
    *, memories: int = 100_000, tenants: int = 1000, big_share: float = 0.2, queries: int = 400,
    data_dir: Path | None = None, settings: Settings | None = None,
) -> dict[str, Any]:  # fmt: skip
    data_dir = data_dir or Path(platformdirs.user_cache_dir("engram")) / f"bench-recall-{memories}-{tenants}"
    data_dir.mkdir(parents=True, exist_ok=True)
    base = settings or Settings()
    engram = await Engram.open(
        base.model_copy(update={"data_dir": data_dir, "database_url": None, "embedding_timeout": 600.0})
    )
    try:
        sizes = tenant_sizes(memories, tenants, big_share)
        ingest_s = 0.0
        if (await engram.list(tenant=BIG, limit=1)).items == []:
            started = time.perf_counter()
            by_tenant = await ingest(engram, sizes)
            ingest_s = time.perf_counter() - started
        else:
            texts = memory_texts(sum(sizes.values()), seed=17)
            by_tenant, at = {}, 0
            for tenant, size in sizes.items():
                by_tenant[tenant] = texts[at : at + size]
                at += size
        await engram.index_large_tenants()  # what engram serve's maintenance does within minutes
        async with engram.db.owner() as conn:  # what autovacuum does: measure a settled database, not its chores
            await conn.execute("VACUUM (ANALYZE) memories, memory_embeddings, search_postings, recall_receipts")
        return await _measure(engram, sizes, by_tenant, queries, ingest_s)
    finally:
        await engram.close()


async def _measure(
    engram: Engram, sizes: dict[str, int], by_tenant: dict[str, list[str]], queries: int, ingest_s: float
) -> dict[str, Any]:
    assert engram.gateway is not None
    rng = random.Random(99)
    names = list(sizes)
    weights = [sizes[n] for n in names]
    plan = []
    for _ in range(queries):
        tenant = rng.choices(names, weights)[0]
        plan.append((tenant, f"u{rng.randrange(USERS_PER_TENANT)}", query_from(rng.choice(by_tenant[tenant]), rng)))
    vectors = await engram.gateway.embed([q for _, _, q in plan])

    # One untimed pass first: a running service has its tenants' corpus statistics cached, its statements
    # prepared and its pages in memory; a first recall of a tenant after a restart pays a few ms more.
    for (tenant, user, q), vec in zip(plan, vectors, strict=True):
        await engram.recall(q, tenant=tenant, user_id=user, actor="bench", query_vector=vec)
    plain, by_class = [], {"big": [], "small": []}  # type: ignore[var-annotated]
    plans = Counter[str]()
    for (tenant, user, q), vec in zip(plan, vectors, strict=True):
        started = time.perf_counter()
        result = await engram.recall(q, tenant=tenant, user_id=user, actor="bench", query_vector=vec)
        ms = (time.perf_counter() - started) * 1000
        plans[result.plan.name if result.plan else "unknown"] += 1
        plain.append(ms)
        by_class["big" if tenant == BIG else "small"].append(ms)
    with_embedding = []
    for tenant, user, q in plan:
        engram.retriever.clear_query_cache()  # every query pays for its embedding
        started = time.perf_counter()
        await engram.recall(q + " ?", tenant=tenant, user_id=user, actor="bench")
        with_embedding.append((time.perf_counter() - started) * 1000)

    baseline = await machine_baseline(engram)
    small = small_tenant(sizes)
    recall_small = await _filtered_recall(engram, small, by_tenant[small], rng)
    recall_large = await _filtered_recall(engram, BIG, by_tenant[BIG], rng)

    return {
        "shape": "tenants",
        "memories": sum(sizes.values()),
        "tenants": len(sizes),
        "big_tenant_memories": sizes[BIG],
        "small_tenant_memories": sizes[small],
        "queries": len(plan),
        "big_tenant_query_share": round(len(by_class["big"]) / len(plan), 3),
        "plan_counts": dict(plans),
        **latency_stats(plain),
        **latency_stats(with_embedding, "_with_embedding"),
        "p95_ms_big_tenant": round(percentile(by_class["big"], 95), 2),
        "p95_ms_small_tenants": round(percentile(by_class["small"], 95), 2),
        "filtered_recall_at_10_small": recall_small,
        "filtered_recall_at_10_large": recall_large,
        **baseline,
        "ingest_seconds": round(ingest_s, 1),
        "embedding_model": engram.gateway.model_id,
    }


def small_tenant(sizes: dict[str, int]) -> str:
    """The tenant whose filtered recall stands for the small ones: the one nearest 100 memories, big aside."""
    return min((n for n in sizes if n != BIG), key=lambda n: abs(sizes[n] - 100))


def latency_stats(values: Iterable[float], suffix: str = "") -> dict[str, float]:
    """p50, p95 and p99 of latencies in ms, as ``p50_ms{suffix}`` and so on."""
    got = list(values)
    return {f"{p}_ms{suffix}": round(percentile(got, int(p[1:])), 2) for p in ("p50", "p95", "p99")}


async def machine_baseline(engram: Engram) -> dict[str, float]:
    """How fast this machine is right now, to read the latencies against (shared machines vary 2x in an
    hour): the median round trip of ``SELECT 1`` on a pooled connection, and the median time of a fixed
    pure-Python workload."""
    trips = []
    async with engram.db.app() as conn:
        for _ in range(200):
            started = time.perf_counter()
            await (await conn.execute("SELECT 1")).fetchall()
            trips.append((time.perf_counter() - started) * 1000)
    cpu = []
    for _ in range(5):
        started = time.perf_counter()
        sum(i * i for i in range(200_000))
        cpu.append((time.perf_counter() - started) * 1000)
    return {
        "baseline_round_trip_ms": round(percentile(trips, 50), 3),
        "baseline_cpu_ms": round(percentile(cpu, 50), 2),
    }


EXACT = {"enable_indexscan": "off", "enable_bitmapscan": "off"}


async def _filtered_recall(engram: Engram, tenant: str, texts: list[str], rng: random.Random, n: int = 200) -> float:
    """The top 10 of the production dense candidate list (HNSW, iterative scan, filters, ``candidates``,
    ``ef_search`` as recall sizes it for the caller's scope, re-sorted) against exact search (the same
    query with index scans disabled: a sequential scan and a sort, LIMIT 10), for one tenant."""
    assert engram.gateway is not None
    gateway = engram.gateway
    cfg = PRESETS["hybrid"]
    queries = [query_from(rng.choice(texts), rng) for _ in range(n)]
    vectors = await gateway.embed(queries)
    async with engram.db.tenant(tenant) as conn:
        corpus = await engram.retriever.read_corpus(conn, tenant)
    own = corpus.own_index
    scores = []
    for q, vec in zip(queries, vectors, strict=True):
        req = RecallRequest(query=q, user_id=f"u{rng.randrange(USERS_PER_TENANT)}")
        f = build_filter(tenant, req)
        search = Search(f, cfg, vector=vec, model_id=gateway.model_id, dims=gateway.dimensions, own_index=own)
        owned = engram.retriever.scopes.cached(tenant, f.params["owners"])
        if owned is None:  # counted once per user and reused, as recall does
            async with engram.db.tenant(tenant) as conn:
                owned = await engram.retriever.scopes.count(conn, tenant, f.params["owners"], gateway.model_id)
        # The list recall's own walk of this graph keeps for a scope of this size (``scope.ef_search``).
        size = scope.choose(corpus, owned).scope_size
        walk = RecallPlan(name="tenant-index" if own else "shared-index", scope_size=size, reason="bench")
        ef = scope.ef_search(walk, corpus, cfg.ef_search, cfg.candidates)
        async with engram.db.tenant(tenant, recall_settings(cfg, ef)) as conn:
            fast = (await dense.SELF.hits(await dense.SELF.send(conn, search), search))[:10]
        async with engram.db.tenant(tenant, EXACT) as conn:
            # Never prepared: a prepared statement keeps the plan it was first given (the HNSW one) whatever
            # the settings are now, and the reference would then be an approximate search itself.
            stmt = dense.statement(gateway.model_id, gateway.dimensions, "embedding", f, limit=10)
            rows = await (await conn.execute(stmt, {**f.params, "qv": vec}, prepare=False)).fetchall()
        truth = {r["id"] for r in rows}
        if truth:
            scores.append(len(truth & {h.id for h in fast}) / len(truth))
    return round(float(np.mean(scores)), 4) if scores else 0.0
