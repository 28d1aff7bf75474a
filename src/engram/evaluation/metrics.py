"""Ranking metrics (binary relevance)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def recall_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the gold ids among the top k (LoCoMo's evidence recall)."""
    if not gold:
        return 0.0
    top = set(ranked[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def any_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    top = set(ranked[:k])
    return float(any(g in top for g in gold))


def all_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    top = set(ranked[:k])
    return float(bool(gold) and all(g in top for g in gold))


def reciprocal_rank(ranked: Sequence[str], gold: Collection[str]) -> float:
    for i, r in enumerate(ranked, start=1):
        if r in gold:
            return 1.0 / i
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 1) for i, r in enumerate(ranked[:k], start=1) if r in gold)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), k) + 1))
    return dcg / ideal if ideal else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
