"""`engram bench write`: write throughput against the raw embedder on the same texts, in one run."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from engram.bench.texts import memory_texts
from engram.config import Settings
from engram.errors import EngramError
from engram.evaluation.metrics import percentile
from engram.model import MemoryInput
from engram.model.admission import PROFILES
from engram.policy import admit, names
from engram.service import Engram
from engram.service.writes import remember_many


async def run_write_bench(
    *, n: int = 2000, batch_size: int = 250, single: int = 300, data_dir: Path | None = None
) -> dict[str, Any]:
    tmp = None
    if data_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="engram-bench-"))
        data_dir = tmp
    settings = Settings(data_dir=data_dir, embedder="local", database_url=None, pool_max_size=4)
    try:
        engram = await Engram.open(settings)
        try:
            return await _measure(engram, n=n, batch_size=batch_size, single=single)
        finally:
            await engram.close()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


async def _measure(engram: Engram, *, n: int, batch_size: int, single: int) -> dict[str, Any]:
    gateway = engram.gateway
    assert gateway is not None
    texts = memory_texts(n, seed=11)
    # Warm up the model, the pool and the plans outside the timed phases.
    await gateway.embed(memory_texts(64, seed=1, tag="warm"))
    await _batched(engram, "bench-warmup", memory_texts(200, seed=2, tag="warm"), batch_size, "sync")
    await engram.analyze()  # planner statistics, as autovacuum keeps them on a server that has run a while

    # Interleaved, chunk by chunk on the same texts, so drift in machine speed hits both sides alike.
    embedder_s = batched_s = deferred_s = 0.0
    for i in range(0, n, batch_size):
        chunk = texts[i : i + batch_size]
        started = time.perf_counter()
        await gateway.embed(chunk)
        embedder_s += time.perf_counter() - started
        batched_s += await _batched(engram, "bench-batched", chunk, batch_size, "sync")
        deferred_s += await _batched(engram, "bench-deferred", chunk, batch_size, "deferred")

    single_texts = texts[:single]
    started = time.perf_counter()
    for text in single_texts:
        await engram.remember(text, tenant="bench-single", actor="bench")
    single_s = time.perf_counter() - started
    admission = await _admission_cost(engram, memory_texts(single, seed=5, tag="adm"))

    embedder_rate = n / embedder_s
    batched_rate = n / batched_s
    return {
        "memories": n,
        "batch_size": batch_size,
        "embedding_model": gateway.model_id,
        "embedder_texts_per_s": round(embedder_rate, 1),
        "single_writes_per_s": round(single / single_s, 1),
        "batched_writes_per_s": round(batched_rate, 1),
        "deferred_batched_writes_per_s": round(n / deferred_s, 1),
        "batched_vs_embedder": round(batched_rate / embedder_rate, 3),
        **admission,
    }


async def _admission_cost(engram: Engram, texts: list[str]) -> dict[str, Any]:
    """Single writes of the same texts without admission, with it but without the NER (person names not
    looked for), and with the whole default policy, in rotating order (three tenants, each embedding its own
    texts); and the pure checks alone: what admission adds to a write."""
    sides: dict[str, list[float]] = {"off": [], "no_ner": [], "full": []}
    checks_ms: list[float] = []
    policy = PROFILES["default"]
    who = {
        "off": engram._who("bench-unadmitted", None, "bench"),
        "no_ner": engram._who("bench-admitted", None, "bench"),
        "full": engram._who("bench-admitted-ner", None, "bench"),
    }
    structured = [k for k in policy.pii_kinds if k != "person"]
    await engram.update_admission_policy({"pii_kinds": structured}, tenant="bench-admitted")
    order = list(sides)
    for i, text in enumerate(texts):
        for side in order[i % 3 :] + order[: i % 3]:
            started = time.perf_counter()
            results = await remember_many(
                engram, who[side], [{"content": text}], "sync", batch=False, admission=side != "off"
            )
            sides[side].append((time.perf_counter() - started) * 1000)
            if isinstance(results[0], EngramError):
                raise results[0]
        started = time.perf_counter()
        admit(MemoryInput(content=text), policy)
        checks_ms.append((time.perf_counter() - started) * 1000)
    p95 = {side: percentile(ms, 95) for side, ms in sides.items()}
    return {
        "single_write_p50_ms": round(percentile(sides["full"], 50), 2),
        "single_write_p95_ms": round(p95["full"], 2),
        "single_write_p95_ms_without_ner": round(p95["no_ner"], 2),
        "single_write_p50_ms_without_admission": round(percentile(sides["off"], 50), 2),
        "single_write_p95_ms_without_admission": round(p95["off"], 2),
        "admission_p95_ms_added": round(p95["no_ner"] - p95["off"], 2),
        "admission_with_ner_p95_ms_added": round(p95["full"] - p95["off"], 2),
        "admission_checks_p95_ms": round(percentile(checks_ms, 95), 3),
        "ner": names.available(),
    }


async def _batched(engram: Engram, tenant: str, texts: list[str], batch_size: int, embed: Any) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        results = await engram.remember_many(
            [{"content": t} for t in texts[i : i + batch_size]], tenant=tenant, actor="bench", embed=embed
        )
        failed = [r for r in results if isinstance(r, EngramError)]
        if failed:
            raise failed[0]
    return time.perf_counter() - started


def main() -> None:  # pragma: no cover - convenience for profiling
    print(asyncio.run(run_write_bench()))
