"""Ranking without a database: fusion, the relevance floor, trust in the utility, disagreements."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from engram.model.tenant import DEFAULT_SOURCE_TRUST
from engram.retrieval.candidates import Hit
from engram.retrieval.config import preset
from engram.retrieval.conflicts import resolve
from engram.retrieval.fusion import Candidate, collect, fuse, rank, utility

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def row(content: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "content": content, "summary": None, "source_type": "user_message", "confidence": 1.0, "importance": 0.5,
        "valid_from": NOW - timedelta(days=1), "recorded_at": NOW - timedelta(days=1), "fact_key": None,
        "speaker": None, "session_id": None,
    }  # fmt: skip
    base.update(fields)
    return base


def cand(content: str, *, cos: float | None = None, share: float | None = None, **fields: Any) -> Candidate:
    r = row(content, **fields)
    if cos is not None:
        r["cos_self"] = r["cos_context"] = cos
    if share is not None:
        r["term_share"] = share
    return Candidate(uuid.uuid4(), r)


def ranked(cands: list[Candidate], **overrides: Any) -> list[Candidate]:
    cfg = preset("hybrid", **overrides)
    hits: dict[str, list[Hit]] = {"lexical": [], "dense": []}
    for c in cands:
        if "term_share" in c.row:
            hits["lexical"].append(Hit(c.id, 1.0 + c.row["term_share"], c.row))
        if "cos_self" in c.row:
            hits["dense"].append(Hit(c.id, c.row["cos_self"], c.row))
    found = collect(hits)
    fuse(found, cfg, named_speakers=[])
    utility(found, cfg, NOW, DEFAULT_SOURCE_TRUST)
    return rank([c for c in found if c.relevant])


def test_one_shared_word_does_not_clear_the_floor() -> None:
    wanted = cand("Jane prefers to be contacted by email", cos=0.62, share=0.9)
    noise = [cand(f"Ticket {n}: Jane reported a broken printer", cos=0.15, share=0.1) for n in range(6)]
    assert [c.row["content"] for c in ranked([wanted, *noise])] == [wanted.row["content"]]
    close = cand("Reach Jane through the mail, not the phone", cos=0.41)  # meaning alone clears it
    words = cand("Jane wants contact by email only", share=0.7)  # most of the query's weight alone clears it
    assert {c.row["content"] for c in ranked([close, words, *noise])} == {close.row["content"], words.row["content"]}
    # With the floor lowered to nothing, the noise is back.
    assert len(ranked([wanted, *noise], min_similarity=-1.0, min_term_share=0.0)) == 7


def test_a_verified_fact_outranks_a_guess_about_the_same_thing() -> None:
    guess = cand("Invoice INV-77 is probably still unpaid", cos=0.70, share=0.8, source_type="agent_inference",
                 confidence=0.76)  # fmt: skip
    paid = cand("Invoice INV-77 was paid in full on 2026-11-02", cos=0.58, share=0.6, source_type="tool_result")
    order = ranked([guess, paid])
    assert [c.id for c in order] == [paid.id, guess.id]
    assert order[0].trust == 1.0 and order[1].trust == 0.5
    # Without trust in the utility the more similar guess wins: the prior is what turns it.
    untrusting = ranked([guess, paid], utility={"trust": 0.0})
    assert untrusting[0].row["content"] == guess.row["content"]


def test_one_source_type_ranks_by_relevance_alone() -> None:
    a, b, c = (cand(f"memory {n}", cos=s, share=0.6) for n, s in ((1, 0.3), (2, 0.7), (3, 0.5)))
    assert [x.row["content"] for x in ranked([a, b, c])] == ["memory 2", "memory 3", "memory 1"]


def test_disagreements_are_marked_and_the_better_sourced_moves_ahead() -> None:
    older = cand("The staging deploy runs every Wednesday evening", cos=0.8, share=0.9,
                 valid_from=NOW - timedelta(days=30))  # fmt: skip
    newer = cand("The staging deploy runs every Thursday evening", cos=0.7, share=0.9)
    other = cand("Lunch is served at noon on Fridays", cos=0.3, share=0.5)
    order = resolve(ranked([older, newer, other]))
    assert [c.row["content"] for c in order] == [newer.row["content"], older.row["content"], other.row["content"]]
    first, second, third = order
    assert first.conflicts == [second.id] and second.conflicts == [first.id] and third.conflicts == []
    assert f"conflicts:{first.id}" in second.reasons


def test_same_numbers_and_names_or_different_wording_are_no_conflict() -> None:
    a = cand("Invoice 77 was paid by Jane", cos=0.8, share=0.9)
    b = cand("Invoice 77 was paid by Jane on time", cos=0.7, share=0.9)
    c = cand("Invoice 78 is due next week for the Berlin office", cos=0.6, share=0.6)
    resolve([a, b, c])
    assert a.conflicts == b.conflicts == c.conflicts == []


def test_a_fact_key_or_a_contradicts_relation_marks_a_conflict_whatever_the_wording() -> None:
    a = cand("Jane's manager is Tom", fact_key="jane.manager")
    b = cand("Priya leads the team Jane is in", fact_key="jane.manager", source_type="tool_result")
    c = cand("Jane reports to Omar since March", source_type="human_note")
    utility([a, b, c], preset("hybrid"), NOW, DEFAULT_SOURCE_TRUST)  # their trust
    order = resolve([a, b, c], related={frozenset((a.id, c.id))})
    assert [x.id for x in order] == [b.id, c.id, a.id]  # tool result, then the human note, then the message
    assert set(a.conflicts) == {b.id, c.id} and b.conflicts == [a.id] and c.conflicts == [a.id]
