"""`engram bench scale`: the ``users`` and ``one-scope`` shapes (``shapes``) at growing sizes, and how much
recall's p95 grows per 10x memories.

A shape's points are measured in turns, not one after another: every point's database is open at once,
and each block of ``BLOCK`` questions is asked of every point before the next block (the order of the
points rotating from block to block). A shared machine's speed drifts by up to 2x within an hour; measured
one after another, a point could land in a slow phase and the next in a fast one, and the ratio between
them moved by more than the growth it measures (docs/performance.md). In turns, every point sees the same
machine. And as the peers' harness does (``../shared/peers``), the whole round is run ``passes`` times and
each figure is the median of the passes': a p95 of 200 recalls is their tenth slowest, and one pass's ratio
of two of them swings from run to run on an unchanged machine, and still does over a few passes
(docs/performance.md, eighteenth and twenty-second runs).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import statistics
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from engram.bench.recall import machine_baseline
from engram.bench.shapes import Sampler, opened
from engram.config import Settings

SIZES = (10_000, 100_000, 1_000_000)
BLOCK = 20  # questions asked of one point before the next point's turn
PASSES = 9  # rounds of every question, each figure the median of theirs
FIGURES = ("p50_ms", "p95_ms", "p95_ms_with_embedding")
T = TypeVar("T")


async def run_scale_bench(
    *, sizes: Sequence[int] = SIZES, shapes: Sequence[str] = ("users", "one-scope"), queries: int = 200,
    passes: int = PASSES, data_dir: Path | None = None, settings: Settings | None = None,
    vectors_dir: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Each shape at each size (a database per point, under ``data_dir`` when given, kept for the next run;
    ``vectors_dir`` as for ``shapes.opened``), a shape's points measured in turns, ``passes`` times."""
    points: list[dict[str, Any]] = []
    baseline: dict[str, float] = {}
    for shape in shapes:
        async with contextlib.AsyncExitStack() as stack:
            samplers = []
            for n in sorted(sizes):
                where = data_dir / f"{shape}-{n}" if data_dir else None
                point = await stack.enter_async_context(
                    opened(shape, memories=n, queries=queries, data_dir=where, settings=settings,
                           vectors_dir=vectors_dir)
                )  # fmt: skip
                samplers.append(Sampler(point))
            for sampler in samplers:
                await sampler.prepare()
            rounds: list[list[dict[str, Any]]] = [[] for _ in samplers]
            for _ in range(passes):
                await _in_turns(samplers, queries)
                for sampler, mine in zip(samplers, rounds, strict=True):
                    mine.append(sampler.result())
                    sampler.reset()
            baseline = await machine_baseline(samplers[-1].point.engram)
            for sampler, mine in zip(samplers, rounds, strict=True):
                points.append({
                    "shape": shape, "memories": sampler.point.memories,
                    **{f"recall_{k}": round(statistics.median(r[k] for r in mine), 2) for k in FIGURES},
                    "hit_at_5": mine[-1]["hit_at_5"], "plan_counts": mine[-1]["plan_counts"],
                    "passes": [{k: r[k] for k in FIGURES} for r in mine],
                })  # fmt: skip
    return {"points": points, "growth_per_10x": growth(points), "measured_in_turns_of": BLOCK, "passes": passes,
            **baseline}  # fmt: skip


async def _in_turns(samplers: Sequence[Sampler], queries: int) -> None:
    """Every block of questions asked of every point in turn (``turns``): first with the vectors given,
    then with their embedding."""
    asked = min([queries, *(len(s.asks) for s in samplers)])
    order = list(turns(samplers, [range(start, min(start + BLOCK, asked)) for start in range(0, asked, BLOCK)]))
    for sampler, block in order:
        await sampler.given(block)
    for sampler, block in order:
        await sampler.embedded(block)


def turns(points: Sequence[T], blocks: Sequence[range]) -> Iterator[tuple[T, range]]:
    """Each block for every point, the points' order rotating by one from block to block (no point always
    follows the same one)."""
    for k, block in enumerate(blocks):
        first = k % len(points)
        for point in itertools.chain(points[first:], points[:first]):
            yield point, block


def growth(points: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per shape, for each pair of sizes in a row: p95's ratio scaled to a 10x step (ratio ** (1 / log10 step))."""
    found: dict[str, list[dict[str, Any]]] = {}
    for shape in dict.fromkeys(p["shape"] for p in points):
        mine = sorted((p for p in points if p["shape"] == shape), key=lambda p: p["memories"])
        steps = []
        for a, b in itertools.pairwise(mine):
            decades = math.log10(b["memories"] / a["memories"])
            ratio = b["recall_p95_ms"] / a["recall_p95_ms"] if a["recall_p95_ms"] else math.inf
            steps.append({"from": a["memories"], "to": b["memories"], "p95_ratio": round(ratio, 3),
                          "p95_ratio_per_10x": round(ratio ** (1 / decades), 3) if decades else None})  # fmt: skip
        found[shape] = steps
    return found
