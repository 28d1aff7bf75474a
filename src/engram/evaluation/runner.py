"""Shared plumbing: an Engram on a throw-away (or given) embedded database, and timed recalls."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from engram.config import Settings
from engram.errors import EngramError, PolicyRejection
from engram.model.recall import RecallResult
from engram.retrieval.config import RetrievalConfig
from engram.retrieval.corpus import ANALYZE_RECALL_TABLES
from engram.service import Engram

BENCHMARKS = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"


def default_data(relative: str) -> Path:
    """../shared/benchmarks/... next to the checkout, else next to the current directory."""
    for base in (BENCHMARKS, Path.cwd().parent / "shared" / "benchmarks", Path.cwd() / "shared" / "benchmarks"):
        if (base / relative).exists():
            return base / relative
    return BENCHMARKS / relative


@asynccontextmanager
async def engram_for_eval(data_dir: Path | None, settings: Settings | None = None) -> AsyncIterator[Engram]:
    tmp = None
    if data_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="engram-eval-"))
        data_dir = tmp
    base = settings or Settings()
    # Ingestion embeds large batches of long turns: allow the time it takes (the default 10 s is for
    # interactive writes, which defer to the enrichment worker instead).
    update = {"data_dir": data_dir, "database_url": None, "embedding_timeout": max(base.embedding_timeout, 600.0)}
    engram = await Engram.open(base.model_copy(update=update))
    try:
        yield engram
    finally:
        await engram.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


async def settle(engram: Engram) -> None:
    """Embed anything still waiting, so evaluation never runs on half-embedded data; then refresh the
    planner's statistics, as autovacuum does within a minute of a bulk load (before it, the first tenant of
    a new database is planned as if its tables were empty: recalls took 100-250 ms instead of 20)."""
    while await engram.embedding_backlog():
        if not await engram.enrich_pending(limit=512, lease_seconds=600):
            raise RuntimeError("memories are waiting for vectors but the embedder makes no progress")
    async with engram.db.owner() as conn:
        await conn.execute(ANALYZE_RECALL_TABLES)


async def timed_recall(
    engram: Engram, query: str, *, tenant: str, preset: str, k: int, config: RetrievalConfig | None = None
) -> tuple[RecallResult, float]:
    started = time.perf_counter()
    result = await engram.recall(
        query, tenant=tenant, preset=preset, max_items=k, max_tokens=200_000, actor="eval", config=config
    )
    return result, (time.perf_counter() - started) * 1000.0


async def write_transcript(
    engram: Engram, tenant: str, items: list[dict[str, Any]], decisions: Counter[str]
) -> dict[str, str]:
    """Write conversation turns through admission with the transcript profile (SPEC 4.5): memory id ->
    external_id of each stored turn. A refused turn is left out, as a user's would be; a quarantined one is
    stored but never recalled. ``decisions`` counts each admission decision."""
    policy = await engram.admission_policy(tenant=tenant)
    if policy.profile != "transcript":
        await engram.update_admission_policy({"profile": "transcript"}, tenant=tenant)
    by_memory: dict[str, str] = {}
    results = await engram.remember_many(items, tenant=tenant, actor="eval")
    for item, r in zip(items, results, strict=True):
        if isinstance(r, PolicyRejection):
            decisions["reject"] += 1
            continue
        if isinstance(r, EngramError):
            raise r
        decisions[r.admission.decision] += 1
        by_memory[str(r.id)] = item["external_id"]
    return by_memory
