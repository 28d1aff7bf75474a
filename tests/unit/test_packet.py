"""The packet builder: the default counter's fast path counts exactly what the generic path counts."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime

import pytest

from engram.model.memory import Source
from engram.model.recall import RecallItem
from engram.retrieval.packet import _WORDS, HEADER, approximate_tokens, build, render_item

WORDS = ["rollout", "naïve", "Zürich", "504", "x", "—", "e-mail", "<memory", "über", "a.b.c", "日本語", "?!", "\t"]


def item(text: str) -> RecallItem:
    at = datetime(2026, 1, 2, tzinfo=UTC)
    return RecallItem(
        id=uuid.uuid4(), content=text, summary=None, kind="episodic", source=Source(type="user_message"),
        recorded_at=at, valid_from=at, confidence=0.9, importance=0.5, score=1.0, ranks={}, signals={}, reasons=[],
    )  # fmt: skip


def texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def test_measures_of_blocks_add_up_to_the_measure_of_the_packet() -> None:
    rng = random.Random(7)
    blocks = [render_item(item(t)) for t in texts(rng, 30)]
    chars, words = approximate_tokens.measure(HEADER)
    for block in blocks:
        c, w = approximate_tokens.measure(block)
        chars, words = chars + c, words + w
    whole = HEADER + "".join(blocks)
    assert approximate_tokens.measure(whole) == (chars, words)
    assert approximate_tokens(whole) == approximate_tokens.tokens(chars, words)


@pytest.mark.parametrize("budget", [10, 90, 150, 400, 1000, 5000])
def test_default_counter_path_is_exact_and_never_over_budget(budget: int) -> None:
    rng = random.Random(budget)
    items = [item(t) for t in texts(rng, 40)]
    packet, tokens, placed = build(items, max_items=25, max_tokens=budget)
    assert tokens == approximate_tokens(packet) if packet else tokens == 0
    assert tokens <= budget
    assert packet.count("<memory id=") == len(placed)
    assert all(render_item(i) in packet for i in placed)  # whole items only (escaped as rendered)
    # The generic path (any other counter) holds the same promises.
    generic_packet, generic_tokens, generic_placed = build(
        items, max_items=25, max_tokens=budget, count=lambda text: approximate_tokens(text)
    )
    assert generic_tokens == approximate_tokens(generic_packet) if generic_packet else generic_tokens == 0
    assert generic_tokens <= budget and generic_packet.count("<memory id=") == len(generic_placed)


def test_ascii_fast_path_counts_what_the_regex_counts() -> None:
    rng = random.Random(11)
    alphabet = [chr(i) for i in range(128)]  # every ASCII character, controls and separators included
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert text.isascii()
        assert approximate_tokens.measure(text) == (len(text), len(_WORDS.findall(text))), repr(text)
    assert approximate_tokens.measure("naïve café") == (10, 2)  # not ASCII: the regex itself
