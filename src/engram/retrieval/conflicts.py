"""Disagreeing items among those recall selected (pure; no I/O).

Two items disagree when they hold the same fact key, when a ``contradicts`` relation joins them, or when
they say nearly the same thing with other numbers, dates or names ("The staging deploy runs every Wednesday"
and "... every Thursday"). The newer or better-sourced one is ranked first, and both name the other.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Sequence
from itertools import combinations

from engram.retrieval.fusion import Candidate

# Numbers, dates and ids; and capitalised words not at a sentence's start (names).
_ANCHOR = re.compile(r"\w*\d[\w.,:/-]*|(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]*")
_WORD = re.compile(r"[a-z]{3,}")
NEAR_WORDING = 0.6  # Jaccard similarity of the remaining words above which two items say the same thing


def _shape(c: Candidate) -> tuple[frozenset[str], frozenset[str]]:
    """The anchors of an item's text, and its other words."""
    text = c.row.content or c.row.summary or ""
    anchors = frozenset(a.rstrip(".,:") for a in _ANCHOR.findall(text.strip()))
    lowered = {a.lower() for a in anchors}
    return anchors, frozenset(w for w in _WORD.findall(text.lower()) if w not in lowered)


def disagree(
    a: Candidate, b: Candidate, related: Collection[frozenset[uuid.UUID]],
    shapes: dict[uuid.UUID, tuple[frozenset[str], frozenset[str]]],
) -> bool:  # fmt: skip
    if frozenset((a.id, b.id)) in related:
        return True
    key_a, key_b = a.row.fact_key, b.row.fact_key
    if key_a is not None and key_a == key_b:
        return True
    (anchors_a, wa), (anchors_b, wb) = shapes[a.id], shapes[b.id]
    if anchors_a == anchors_b or not (wa and wb):
        return False
    return len(wa & wb) / len(wa | wb) >= NEAR_WORDING


def _standing(c: Candidate) -> tuple[float, object, object]:
    """Better sourced first (trust x confidence), then newer."""
    return (c.trust * float(c.row.confidence), c.row.valid_from, c.row.recorded_at)


def resolve(ranked: Sequence[Candidate], related: Collection[frozenset[uuid.UUID]] = ()) -> list[Candidate]:
    """``ranked`` with each disagreeing pair marked (``conflicts``) and its better one moved just ahead of
    the other when it ranked below it."""
    order = list(ranked)
    shapes = {c.id: _shape(c) for c in order}
    for a, b in combinations(list(order), 2):
        if not disagree(a, b, related, shapes):
            continue
        a.conflicts.append(b.id)
        b.conflicts.append(a.id)
        a.reasons.append(f"conflicts:{b.id}")
        b.reasons.append(f"conflicts:{a.id}")
        ahead, behind = (a, b) if order.index(a) < order.index(b) else (b, a)
        if _standing(behind) > _standing(ahead):
            order.remove(behind)
            order.insert(order.index(ahead), behind)
    return order
