"""`engram bench recall` end to end on a small corpus: the JSON the issue asks for, with sane values."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

import pytest

from engram.bench.facts import make_facts, user_sizes
from engram.bench.recall import run_recall_bench, small_tenant, tenant_sizes
from engram.bench.scale import run_scale_bench, turns
from engram.bench.shapes import run_shape_bench


def test_tenant_sizes_are_skewed_with_one_big_tenant() -> None:
    sizes = tenant_sizes(10_000, 100, 0.2)
    assert sum(sizes.values()) == 10_000 and len(sizes) == 100
    assert sizes["bench-big"] == 2_000
    others = sorted((v for k, v in sizes.items() if k != "bench-big"), reverse=True)
    assert others[0] > 10 * others[-1]  # Zipf-like


def test_the_small_tenant_is_the_one_nearest_a_hundred_memories() -> None:
    assert small_tenant({"bench-big": 100, "a": 30, "b": 160, "c": 80}) == "c"
    assert small_tenant(tenant_sizes(40, 2, 0.2)) == "bench-t0000"  # no tenant of 50-200 memories at all


async def test_recall_bench_reports_latency_and_filtered_recall(tmp_path: Path) -> None:
    out = await run_recall_bench(memories=1_200, tenants=12, queries=30, data_dir=tmp_path / "db")
    for key in ("p50_ms", "p95_ms", "p99_ms", "p95_ms_with_embedding", "baseline_round_trip_ms"):
        assert out[key] > 0, key
    assert out["p50_ms"] <= out["p95_ms"] <= out["p99_ms"]
    assert out["memories"] == 1_200 and out["big_tenant_memories"] == 240
    assert 0.9 <= out["filtered_recall_at_10_small"] <= 1.0
    assert 0.9 <= out["filtered_recall_at_10_large"] <= 1.0
    again = await run_recall_bench(memories=1_200, tenants=12, queries=30, data_dir=tmp_path / "db")
    assert again["ingest_seconds"] == 0.0  # the database is reused


def test_facts_are_distinct_deterministic_and_skewed() -> None:
    facts = make_facts(300_000, real=100_000, queries=200)
    assert len(set(facts.docs)) == 300_000 and facts == make_facts(300_000, real=100_000, queries=200)
    assert all(i < 100_000 for _, i in facts.queries) and len({i for _, i in facts.queries}) == 200
    sizes = sorted(Counter(facts.users).values())
    assert len(sizes) == 1000 and sizes[-1] > 25 * sizes[0]  # Zipf, s = 0.5: 51 to 1,619 per 100k
    question, gold = facts.queries[0]
    name = question.split(" does ")[-1].split("'s ")[0] if " does " in question else None
    assert name is None or name in facts.docs[gold]
    assert sum(user_sizes(1_000, 1000)) == 1_000 and sum(user_sizes(500, 1000)) == 500
    assert make_facts(2_000).docs[:1_000] == make_facts(1_000).docs  # one vector cache serves every size


# What the issue asks every shape's JSON to hold.
SHAPE_KEYS = {
    "shape", "memories", "queries", "p50_ms", "p95_ms", "p99_ms", "p50_ms_with_embedding", "p95_ms_with_embedding",
    "p99_ms_with_embedding", "hit_at_5", "scope_size_p50", "plan_counts", "baseline_round_trip_ms",
    "baseline_cpu_ms", "ingest_seconds", "embedding_model",
}  # fmt: skip


@pytest.fixture(scope="module")
def vectors_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of the facts' real vectors for this module's runs, not the user's own."""
    return tmp_path_factory.mktemp("vectors")


async def test_shapes_report_hits_plans_and_latency(tmp_path: Path, vectors_dir: Path) -> None:
    users = await run_shape_bench(
        "users", memories=1_500, queries=20, data_dir=tmp_path / "users", vectors_dir=vectors_dir
    )
    for key in ("p50_ms", "p95_ms", "p99_ms", "p50_ms_with_embedding", "p95_ms_with_embedding", "baseline_cpu_ms"):
        assert users[key] > 0, key
    assert users.keys() >= SHAPE_KEYS, SHAPE_KEYS - users.keys()
    assert users["shape"] == "users" and users["queries"] == 20 and users["hit_at_5"] >= 0.9
    assert users["plan_counts"] == {"scope-exact": 20} and 1 <= users["scope_size_p50"] <= 60
    # Past the real vectors, facts are loaded in bulk: recall sees them as it sees written ones.
    one = await run_shape_bench(
        "one-scope", memories=2_500, queries=20, data_dir=tmp_path / "one", real_vectors=2_000, vectors_dir=vectors_dir
    )
    assert one["plan_counts"] == {"tenant-index": 20} and 2_400 <= one["scope_size_p50"] <= 2_500
    assert one["hit_at_5"] >= 0.7
    again = await run_shape_bench(
        "users", memories=1_500, queries=20, data_dir=tmp_path / "users", vectors_dir=vectors_dir
    )
    assert again["ingest_seconds"] == 0.0 and again["hit_at_5"] == users["hit_at_5"]  # reused


async def test_scale_reports_points_and_growth(tmp_path: Path, vectors_dir: Path) -> None:
    out = await run_scale_bench(
        sizes=(300, 3_000), shapes=("users",), queries=10, passes=3, data_dir=tmp_path, vectors_dir=vectors_dir
    )
    assert [(p["shape"], p["memories"]) for p in out["points"]] == [("users", 300), ("users", 3_000)]
    assert all(p["recall_p95_ms"] > 0 and p["recall_p95_ms_with_embedding"] > 0 for p in out["points"])
    for point in out["points"]:  # each figure is the median of the passes'
        assert len(point["passes"]) == 3 == out["passes"]
        assert point["recall_p95_ms"] == round(statistics.median(r["p95_ms"] for r in point["passes"]), 2)
        assert point["recall_p50_ms"] == round(statistics.median(r["p50_ms"] for r in point["passes"]), 2)
    (step,) = out["growth_per_10x"]["users"]
    assert step["from"] == 300 and step["to"] == 3_000
    assert step["p95_ratio"] == round(out["points"][1]["recall_p95_ms"] / out["points"][0]["recall_p95_ms"], 3)
    assert out["measured_in_turns_of"] > 0 and out["baseline_cpu_ms"] > 0


def test_scale_points_take_turns_block_by_block() -> None:
    """A shape's points are measured in turns, so a drift of the machine's speed reaches every point alike:
    each block of questions goes to every point, the first point rotating from block to block."""
    blocks = [range(0, 20), range(20, 40), range(40, 45), range(45, 50)]
    order = [(p, b.start) for p, b in turns(["10k", "100k", "1M"], blocks)]
    assert order == [
        ("10k", 0), ("100k", 0), ("1M", 0),
        ("100k", 20), ("1M", 20), ("10k", 20),
        ("1M", 40), ("10k", 40), ("100k", 40),
        ("10k", 45), ("100k", 45), ("1M", 45),
    ]  # fmt: skip
