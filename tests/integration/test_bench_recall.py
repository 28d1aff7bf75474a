"""`engram bench recall` end to end on a small corpus: the JSON the issue asks for, with sane values."""

from __future__ import annotations

from pathlib import Path

from engram.bench.recall import run_recall_bench, tenant_sizes


def test_tenant_sizes_are_skewed_with_one_big_tenant() -> None:
    sizes = tenant_sizes(10_000, 100, 0.2)
    assert sum(sizes.values()) == 10_000 and len(sizes) == 100
    assert sizes["bench-big"] == 2_000
    others = sorted((v for k, v in sizes.items() if k != "bench-big"), reverse=True)
    assert others[0] > 10 * others[-1]  # Zipf-like


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
