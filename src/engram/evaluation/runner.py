"""Shared plumbing: an Engram on a throw-away (or given) embedded database, and timed recalls."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from engram.config import Settings
from engram.model.recall import RecallResult
from engram.retrieval.config import RetrievalConfig
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
    engram = await Engram.open(base.model_copy(update={"data_dir": data_dir, "database_url": None}))
    try:
        yield engram
    finally:
        await engram.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


async def timed_recall(
    engram: Engram, query: str, *, tenant: str, preset: str, k: int, config: RetrievalConfig | None = None
) -> tuple[RecallResult, float]:
    started = time.perf_counter()
    result = await engram.recall(
        query, tenant=tenant, preset=preset, max_items=k, max_tokens=200_000, actor="eval", config=config
    )
    return result, (time.perf_counter() - started) * 1000.0
