"""`engram bench packet`: what the packet's wrapping costs in cl100k tokens, for memories of 10-20 words.

The items are built as recall builds them (sources, confidences, dates and conflicts mixed as a busy tenant
has them) and packed by the same builder; every count is the tokenizer's own.
"""

from __future__ import annotations

import random
import statistics
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from engram.bench.texts import memory_texts
from engram.model.memory import SOURCE_TYPES, Source
from engram.model.recall import RecallItem
from engram.retrieval import packet as pk
from engram.retrieval.tokens import default_counter


def _items(n: int, rng: random.Random) -> list[RecallItem]:
    texts = [" ".join(t.split()[: rng.randint(10, 20)]) for t in memory_texts(n, seed=3)]
    now = datetime(2026, 12, 2, tzinfo=UTC)
    items: list[RecallItem] = []
    for text in texts:
        at = now - timedelta(days=rng.randrange(0, 900))
        conflicts = [items[-1].id] if items and rng.random() < 0.1 else []
        items.append(
            RecallItem(
                id=uuid.uuid4(), content=text, summary=None, kind="episodic",
                source=Source(type=rng.choice(SOURCE_TYPES)), recorded_at=at, valid_from=at,
                confidence=rng.choice([1.0, 0.9, 0.6]), importance=0.5, score=1.0, ranks={}, signals={},
                reasons=[], require_citation=rng.random() < 0.1, conflicts_with=conflicts,
            )
        )  # fmt: skip
    return items


def run_packet_bench(*, items: int = 200, seed: int = 1) -> dict[str, Any]:
    count = default_counter()
    rng = random.Random(seed)
    pool = _items(items, rng)
    wrapping: list[int] = []
    fits: list[int] = []
    headers: list[int] = []
    for start in range(0, len(pool) - 20, 10):  # packets of 20 candidates, each packed under 300 tokens
        window = pool[start : start + 20]
        packet = pk.build(window, max_items=20, max_tokens=300, count=count)
        fits.append(len(packet.placed))
        headers.append(count(packet.text.split("\n", 1)[0] + "\n"))
        lines = packet.text.split("\n")[1:]
        for item in packet.placed:
            line = next(ln for ln in lines if ln.startswith(f"[{item.ref}] "))
            wrapping.append(count(line + "\n") - count(item.content))
    return {
        "tokenizer": count.name,
        "memories": len(pool),
        "words_per_memory": [min(len(i.content.split()) for i in pool), max(len(i.content.split()) for i in pool)],
        "packets": len(fits),
        "header_tokens": max(headers),
        "wrapping_tokens_per_item": {"median": statistics.median(wrapping), "max": max(wrapping)},
        "items_in_300_tokens": {"min": min(fits), "median": statistics.median(fits)},
        "empty_packet_tokens": count(pk.EMPTY),
    }
