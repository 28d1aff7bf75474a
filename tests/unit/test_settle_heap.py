"""Long-running processes (``engram serve``, ``mcp``, ``worker``) freeze what start-up left, so that a full
collection walks only what came since (``cli.common.settle_heap``)."""

from __future__ import annotations

import gc
import time

from engram.cli.common import settle_heap


def test_settled_objects_leave_the_collections() -> None:
    kept = [[n] for n in range(200_000)]  # start-up's many long-lived containers
    try:
        started = time.perf_counter()
        gc.collect()
        walked = time.perf_counter() - started
        assert settle_heap() >= len(kept)
        started = time.perf_counter()
        gc.collect()
        assert time.perf_counter() - started < walked  # they are no longer walked
        garbage = [[]]
        garbage[0].append(garbage)  # a cycle made afterwards is still collected
        del garbage
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
