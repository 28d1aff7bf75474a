"""Disagreeing items among those recall selected (pure; no I/O).

Two items disagree when they hold the same fact key, when a ``contradicts`` relation joins them, or when
they say nearly the same thing with other numbers, dates or names ("The staging deploy runs every Wednesday"
and "... every Thursday"). The newer or better-sourced one is ranked first, and both name the other.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Collection, Sequence
from itertools import combinations

from engram.retrieval.fusion import Candidate

# Numbers, dates and ids; and capitalised words not at a sentence's start (names).
_ANCHOR = re.compile(r"\w*\d[\w.,:/-]*|(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]*")
_WORD = re.compile(r"[a-z]{3,}")
_ID = re.compile(r"[A-Za-z].*\d|\d.*[A-Za-z]")  # letters and digits together: an identifier
# An initial before a name ("Uma T. Fischer"): kept with its stop, an anchor of its own kind (``_initial``).
_INITIAL = re.compile(r"[A-Z]\.(?=\s+[A-Z])")
NEAR_WORDING = 0.6  # Jaccard similarity of the remaining words above which two items say the same thing


def _initial(anchor: str) -> bool:
    """Whether an anchor of ``_text_shape`` is an initial (other anchors lose their trailing stop)."""
    return anchor.endswith(".")


def _shape(c: Candidate) -> tuple[frozenset[str], frozenset[str]]:
    """The anchors of an item's text, and its other words."""
    return _text_shape(c.row.content or c.row.summary or "")


@functools.lru_cache(maxsize=8192)
def _text_shape(text: str) -> tuple[frozenset[str], frozenset[str]]:
    # Kept per text: the memories a tenant's recalls select recur, and their regular expressions were 40% of
    # ``resolve``'s time.
    text = text.strip()
    anchors = frozenset(
        m[0] + "." if len(m[0]) == 1 and _INITIAL.match(text, m.start()) else m[0].rstrip(".,:")
        for m in _ANCHOR.finditer(text)
    )
    lowered = {a.lower() for a in anchors}
    return anchors, frozenset(w for w in _WORD.findall(text.lower()) if w not in lowered)


def disagree(
    a: Candidate, b: Candidate, related: Collection[frozenset[uuid.UUID]],
    shapes: dict[uuid.UUID, tuple[frozenset[str], frozenset[str]]],
) -> bool:  # fmt: skip
    if related and frozenset((a.id, b.id)) in related:
        return True
    key_a, key_b = a.row.fact_key, b.row.fact_key
    if key_a is not None and key_a == key_b:
        return True
    (anchors_a, wa), (anchors_b, wb) = shapes[a.id], shapes[b.id]
    differ = anchors_a ^ anchors_b
    # One value told two ways ("every Wednesday" / "every Thursday": one anchor each side); records that
    # differ in several (two incidents: other ids, codes, days), in an id (INV-77 / INV-78) or in a middle
    # initial (Uma T. / Uma K. Fischer: two people) are about different things.
    if len(differ) != 2 or len(anchors_a - anchors_b) != 1 or not (wa and wb):
        return False
    if any(_ID.search(x) or _initial(x) for x in differ):
        return False
    # So are records whose other words differ on both sides: a second value, in words ("Uma T. Fischer plays
    # the guitar" / "Uma K. Fischer plays the violin": two people). Words on one side only add to the account.
    if not (wa <= wb or wb <= wa):
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
    place = {id(c): i for i, c in enumerate(order)}
    for a, b in combinations(list(order), 2):
        if not disagree(a, b, related, shapes):
            continue
        a.conflicts.append(b.id)
        b.conflicts.append(a.id)
        a.reasons.append(f"conflicts:{b.id}")
        b.reasons.append(f"conflicts:{a.id}")
        ahead, behind = (a, b) if place[id(a)] < place[id(b)] else (b, a)
        if _standing(behind) > _standing(ahead):
            order.remove(behind)
            order.insert(place[id(ahead)], behind)
            place = {id(c): i for i, c in enumerate(order)}
    return order
