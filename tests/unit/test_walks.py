"""How far recall walks an HNSW graph (``retrieval.scope.ef_search``): a graph the scope fills needs no
slack for a filter, a filtered walk keeps room for what the filter drops, the shared graph the most."""

from __future__ import annotations

import pytest

from engram.model.recall import RecallPlan
from engram.retrieval.corpus import Corpus
from engram.retrieval.scope import WHOLE_WALK, ef_search, walk_rows

TENANT = Corpus(n_docs=100_000, avgdl=12.0, speakers=[], fts_config="english", has_context=False,
                own_index=True, source_trust={}, has_contradictions=False)  # fmt: skip


def walk(name: str, size: int, *, most: int = 300, candidates: int = 50) -> int:
    return ef_search(RecallPlan(name=name, scope_size=size, reason="test"), TENANT, most, candidates)


def test_a_graph_the_scope_fills_keeps_a_margin_over_its_candidates() -> None:
    assert walk("tenant-index", 100_000) == walk("owner-index", 3_000) == 64
    assert 50 < 50 * WHOLE_WALK < 100  # more than it returns, less than a filtered walk's slack
    assert walk("tenant-index", 100_000, candidates=20) == 26
    assert walk("tenant-index", 100_000, most=40) == 40  # never past the configured most


@pytest.mark.parametrize(("size", "ef"), [(99_000, 102), (50_000, 200), (40_000, 250), (26_000, 300), (1_000, 300)])
def test_a_filtered_walk_keeps_room_for_what_the_filter_drops(size: int, ef: int) -> None:
    assert walk("tenant-index", size) == ef


def test_the_shared_graph_is_walked_the_furthest() -> None:
    assert walk("shared-index", 5_000) == 300


def rows(name: str, size: int, *, candidates: int = 50, max_items: int = 10) -> int:
    return walk_rows(RecallPlan(name=name, scope_size=size, reason="test"), TENANT, candidates, max_items)


def test_an_exact_scan_or_a_walk_of_a_graph_the_scope_fills_returns_half_the_candidates() -> None:
    assert rows("tenant-index", 100_000) == rows("owner-index", 3_000) == rows("scope-exact", 1_000) == 25
    assert rows("tenant-index", 100_000, max_items=20) == rows("scope-exact", 80, max_items=20) == 40  # twice the items
    assert rows("owner-index", 3_000, max_items=40) == 50  # never more than the candidates
    assert rows("tenant-index", 100_000, candidates=9) == 9
    # Filtered walks and the shared graph keep every candidate: what they drop or miss is unknown.
    assert rows("tenant-index", 99_000) == rows("shared-index", 100_000) == 50
