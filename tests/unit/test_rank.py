"""Ranking without a database: fusion, the relevance floor, trust in the utility, disagreements, the
abstention gate, MMR, expansion along relations."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from engram.model.tenant import DEFAULT_SOURCE_TRUST
from engram.retrieval.config import preset
from engram.retrieval.conflicts import resolve
from engram.retrieval.fusion import Candidate, utility
from engram.retrieval.rank import Evidence, rank
from engram.retrieval.retrievers.base import Hit, Relation, Row

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def row(content: str, *, cos: float | None = None, share: float | None = None, **fields: Any) -> Row:
    base: dict[str, Any] = {
        "id": uuid.uuid4(), "content": content, "summary": None, "kind": "episodic", "source_type": "user_message",
        "source_ref": None, "confidence": 1.0, "importance": 0.5, "valid_from": NOW - timedelta(days=1),
        "recorded_at": NOW - timedelta(days=1), "require_citation": False, "fact_key": None, "speaker": None,
        "session_id": None, "term_share": share, "cos_self": cos, "cos_context": cos, "scored": cos is not None,
    }  # fmt: skip
    base.update(fields)
    return Row(**base)


def cand(content: str, **fields: Any) -> Candidate:
    r = row(content, **fields)
    return Candidate(r.id, r)


def evidence(cands: list[Candidate], **fields: Any) -> Evidence:
    """Each candidate's row found lexically when it holds some of the query's words (``term_share``), and
    densely when the query's cosines were read with it."""
    hits: dict[str, list[Hit]] = {"lexical": [], "dense": []}
    for c in cands:
        if c.row.term_share is not None:
            hits["lexical"].append(Hit(c.id, 1.0 + c.row.term_share, c.row))
        if c.row.cos_self is not None:
            hits["dense"].append(Hit(c.id, c.row.cos_self, c.row))
    hits["dense"].sort(key=lambda h: -h.score)
    return Evidence(hits, has_vector=True, source_trust=DEFAULT_SOURCE_TRUST, **fields)


def ranked(cands: list[Candidate], *, max_items: int = 10, **overrides: Any) -> list[Candidate]:
    return rank(evidence(cands), preset("hybrid", **overrides), at=NOW, max_items=max_items).candidates


def test_one_shared_word_does_not_clear_the_floor() -> None:
    wanted = cand("Jane prefers to be contacted by email", cos=0.62, share=0.9)
    noise = [cand(f"Ticket {n}: Jane reported a broken printer", cos=0.15, share=0.1) for n in range(6)]
    assert [c.row.content for c in ranked([wanted, *noise])] == [wanted.row.content]
    close = cand("Reach Jane through the mail, not the phone", cos=0.41)  # meaning alone clears it
    words = cand("Jane wants contact by email only", share=0.7)  # most of the query's weight alone clears it
    assert {c.row.content for c in ranked([close, words, *noise])} == {close.row.content, words.row.content}
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
    assert untrusting[0].row.content == guess.row.content


def test_one_source_type_ranks_by_relevance_alone() -> None:
    a, b, c = (cand(f"memory {n}", cos=s, share=0.6) for n, s in ((1, 0.3), (2, 0.7), (3, 0.5)))
    assert [x.row.content for x in ranked([a, b, c])] == ["memory 2", "memory 3", "memory 1"]


def test_disagreements_are_marked_and_the_better_sourced_moves_ahead() -> None:
    older = cand("The staging deploy runs every Wednesday evening", cos=0.8, share=0.9,
                 valid_from=NOW - timedelta(days=30))  # fmt: skip
    newer = cand("The staging deploy runs every Thursday evening", cos=0.7, share=0.9)
    other = cand("Lunch is served at noon on Fridays", cos=0.3, share=0.5)
    order = ranked([older, newer, other])  # disagreements settled within the head
    assert [c.row.content for c in order] == [newer.row.content, older.row.content, other.row.content]
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


def test_a_question_about_names_the_tenant_does_not_know_is_answered_by_abstaining() -> None:
    # Found by words alone (the question's other words), nothing close in meaning, every name unknown.
    found = [cand(f"Ticket {n}: the printer on floor 2 jammed", cos=0.1, share=0.8) for n in range(3)]
    cfg = preset("hybrid")
    unknown = rank(evidence(found, names_unknown=1.0), cfg, at=NOW, max_items=5)
    assert unknown.candidates == [] and unknown.abstain
    # A name it knows, something close in meaning, or an exact identifier: no abstention.
    assert not rank(evidence(found, names_unknown=0.5), cfg, at=NOW, max_items=5).abstain
    close = cand("Omar fixed the printer on floor 2", cos=0.55, share=0.8)
    assert not rank(evidence([*found, close], names_unknown=1.0), cfg, at=NOW, max_items=5).abstain
    ev = evidence(found, names_unknown=1.0)
    exact = Evidence({**ev.lists, "identifier": [Hit(found[0].id, 1.0, found[0].row)]}, names_unknown=1.0)
    assert not rank(exact, cfg, at=NOW, max_items=5).abstain
    # Nothing relevant at all is an abstention too.
    assert rank(evidence([cand("Lunch at noon", cos=0.05, share=0.1)]), cfg, at=NOW, max_items=5).abstain


def test_mmr_trades_relevance_for_variety_among_what_the_packet_can_reach() -> None:
    a, b, c = cand("printer A", cos=0.80, share=0.9), cand("printer B", cos=0.79, share=0.9), cand("toner", cos=0.6)
    vectors = {a.id: np.array([1.0, 0.0]), b.id: np.array([0.99, 0.14]), c.id: np.array([0.0, 1.0])}
    plain = rank(evidence([a, b, c], vectors=vectors), preset("hybrid"), at=NOW, max_items=2).candidates
    assert [x.id for x in plain] == [a.id, b.id, c.id]
    diverse = rank(evidence([a, b, c], vectors=vectors), preset("hybrid", mmr=True, mmr_lambda=0.5), at=NOW,
                   max_items=2).candidates  # fmt: skip
    assert [x.id for x in diverse] == [a.id, c.id, b.id] and "mmr" in diverse[1].reasons
    # Without the query vector there is nothing to compare: the order stays.
    blind = Evidence(evidence([a, b, c]).lists, vectors=vectors, source_trust=DEFAULT_SOURCE_TRUST)
    kept = rank(blind, preset("hybrid", mmr=True, mmr_lambda=0.5), at=NOW, max_items=2).candidates
    assert [x.id for x in kept] == [a.id, b.id, c.id]


def test_relations_lead_to_visible_neighbours_and_lift_weak_candidates() -> None:
    incident = cand("Checkout outage: expired TLS certificate", cos=0.7, share=0.9)
    weak = cand("Certificates are renewed quarterly", cos=0.1, share=0.2)
    runbook, hidden = row("Runbook: renew with certbot"), row("Private note on the outage")
    relations = [
        Relation(incident.id, runbook.id, "resolved_by", 0.9),
        Relation(incident.id, hidden.id, "related", 1.0),  # not among the visible neighbours
        Relation(weak.id, incident.id, "related", 1.0),
    ]
    ev = evidence([incident, weak], relations=relations, neighbours={runbook.id: runbook})
    got = {c.id: c for c in rank(ev, preset("hybrid", expand_relations=True), at=NOW, max_items=5).candidates}
    assert hidden.id not in got and runbook.id in got and weak.id in got
    assert got[runbook.id].reasons == [f"related:resolved_by:{incident.id}"]
    assert got[runbook.id].signals["relation"] == pytest.approx(got[incident.id].fused * 0.9 * 0.5)
    assert f"related:related:{incident.id}" in got[weak.id].reasons and got[weak.id].ranks["relation"] == 1
    assert runbook.id not in {c.id for c in ranked([incident, weak])}  # only when asked


def test_cosines_read_after_a_row_count_as_the_rows_own() -> None:
    lexical_only = row("Invoice 12 for the crane lease", share=0.2)
    hits = {"lexical": [Hit(lexical_only.id, 1.3, lexical_only)]}
    without = rank(Evidence(hits), preset("hybrid"), at=NOW, max_items=5)
    assert without.abstain  # a fifth of the query's words, and nothing known of its meaning
    late = Evidence(hits, late_cosines={lexical_only.id: (0.62, None)}, has_vector=True)
    (found,) = rank(late, preset("hybrid"), at=NOW, max_items=5).candidates
    assert found.signals["cos_self"] == found.signals["cos_context"] == 0.62 and found.signals["dense_ok"] == 1.0


@pytest.mark.parametrize(
    "texts",
    [
        ("Incident 4411: the billing portal returned Error 502 for Ana's team after the Monday deploy",
         "Incident 4412: the billing portal returned Error 504 for Dana's team after the Friday deploy",
         "Invoice INV-77 was paid in full", "Invoice INV-78 was paid in full"),
        # One name apart, and another value in plain words apart too: two offices, two people.
        ("The Berlin office orders coffee from Lavazza every Monday",
         "The Munich office orders tea from Lavazza every Monday",
         "Uma T. Fischer is learning to play the guitar", "Uma K. Fischer is learning to play the violin"),
        # A middle initial apart, the same value: two people, not one value told two ways.
        ("Uma T. Fischer lives in Lisbon.", "Uma K. Fischer lives in Lisbon.",
         "Ask J. Okafor before the audit", "Ask M. Okafor before the audit"),
    ],
)  # fmt: skip
def test_records_of_different_things_are_no_conflict(texts: tuple[str, ...]) -> None:
    found = [cand(t) for t in texts]
    resolve(found)
    assert all(c.conflicts == [] for c in found)


def test_words_on_one_side_only_add_to_the_account() -> None:
    # The one value still disagrees.
    planned = cand("The release is planned for March 3")
    moved = cand("The release is now planned for March 10")
    resolve([planned, moved])
    assert planned.conflicts == [moved.id] and moved.conflicts == [planned.id]


def test_a_letter_that_is_a_value_still_disagrees() -> None:
    # A capital letter not before a name (no stop, no name after it) is a value like any other.
    a = cand("We chose Plan A for the launch", cos=0.8, share=0.9)
    b = cand("We chose Plan B for the launch", cos=0.7, share=0.9)
    resolve([a, b])
    assert a.conflicts == [b.id] and b.conflicts == [a.id]


def test_anchors_added_on_one_side_only_are_no_conflict() -> None:
    # Two anchors more on one side and none on the other: a fuller account, not one value told two ways.
    a = cand("The weekly sync moved to the large room", cos=0.8, share=0.9)
    b = cand("The weekly sync with Ana and Bo moved to the large room", cos=0.7, share=0.9)
    resolve([a, b])
    assert a.conflicts == b.conflicts == []


def test_the_same_text_in_other_candidates_is_judged_alike() -> None:
    # Texts' shapes are kept per text: later recalls of the same memories (new candidates) decide alike.
    for _ in range(2):
        older = cand("The staging deploy runs every Wednesday evening", cos=0.8, share=0.9)
        newer = cand("The staging deploy runs every Thursday evening", cos=0.7, share=0.9)
        resolve([older, newer])
        assert older.conflicts == [newer.id] and newer.conflicts == [older.id]
