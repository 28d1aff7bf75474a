"""`engram bench scale`: the ``users`` and ``one-scope`` shapes (``shapes``) at growing sizes, and how much
recall's p95 grows per 10x memories."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.bench.shapes import run_shape_bench
from engram.config import Settings

SIZES = (10_000, 100_000, 1_000_000)


async def run_scale_bench(
    *, sizes: Sequence[int] = SIZES, shapes: Sequence[str] = ("users", "one-scope"), queries: int = 200,
    data_dir: Path | None = None, settings: Settings | None = None, vectors_dir: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Each shape at each size (a database per point, under ``data_dir`` when given, kept for the next run;
    ``vectors_dir`` as for ``run_shape_bench``)."""
    points: list[dict[str, Any]] = []
    for shape in shapes:
        for n in sorted(sizes):
            where = data_dir / f"{shape}-{n}" if data_dir else None
            r = await run_shape_bench(
                shape, memories=n, queries=queries, data_dir=where, settings=settings, vectors_dir=vectors_dir
            )
            points.append({
                "shape": shape, "memories": n, "recall_p50_ms": r["p50_ms"], "recall_p95_ms": r["p95_ms"],
                "recall_p95_ms_with_embedding": r["p95_ms_with_embedding"], "hit_at_5": r["hit_at_5"],
                "plan_counts": r["plan_counts"],
            })  # fmt: skip
    return {"points": points, "growth_per_10x": growth(points)}


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
