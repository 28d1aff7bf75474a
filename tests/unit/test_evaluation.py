"""Scoring rules of the evaluation harness (no I/O)."""

from __future__ import annotations

import pytest

from engram.evaluation import locomo, longmemeval
from engram.evaluation.metrics import all_at, any_at, ndcg_at, percentile, recall_at, reciprocal_rank


def test_locomo_evidence_parsing_follows_the_readme() -> None:
    known = {"D8:6", "D9:17", "D9:1", "D4:4", "D11:26", "D30:5"}
    assert locomo.evidence_ids(["D8:6; D9:17"], known) == ["D8:6", "D9:17"]
    assert locomo.evidence_ids(["D9:1 D4:4 D4:6"], known) == ["D9:1", "D4:4"]  # D4:6 does not resolve
    assert locomo.evidence_ids(["D:11:26"], known) == ["D11:26"]
    assert locomo.evidence_ids(["D30:05"], known) == ["D30:5"]
    assert locomo.evidence_ids(["D", "D10:19"], known) == []


def test_locomo_dates() -> None:
    d = locomo.parse_date("1:56 pm on 8 May, 2023")
    assert (d.year, d.month, d.day, d.hour, d.minute) == (2023, 5, 8, 13, 56)


def test_longmemeval_dates_and_effective_k() -> None:
    d = longmemeval.parse_date("2023/05/30 (Tue) 23:40")
    assert (d.year, d.month, d.day, d.hour) == (2023, 5, 30, 23)
    # Turns mapped to sessions: k grows until the top holds k distinct sessions.
    assert longmemeval._effective(["a", "a", "b", "a", "c"], 3) == 5
    assert longmemeval._effective(["a", "b"], 5) == 5  # fewer items than k: the whole list


def test_longmemeval_official_skips() -> None:
    base = {
        "question_id": "q1",
        "haystack_session_ids": ["answer_1", "s2"],
        "haystack_dates": ["2023/05/30 (Tue) 23:40", "2023/05/31 (Wed) 10:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "x", "has_answer": True}, {"role": "assistant", "content": "y"}],
            [{"role": "user", "content": "z"}],
        ],
    }
    ids = [t[0] for t in longmemeval.turn_ids(base)]
    assert ids == ["answer_1_1", "s2_1"]
    assert longmemeval.scored(base)
    assert not longmemeval.scored({**base, "question_id": "q1_abs"})
    no_answer = {**base, "haystack_sessions": [[{"role": "user", "content": "x"}], [{"role": "user", "content": "z"}]]}
    assert [t[0] for t in longmemeval.turn_ids(no_answer)] == ["noans_1_1", "s2_1"]
    assert not longmemeval.scored(no_answer)


def test_metrics() -> None:
    ranked = ["a", "x", "b", "y"]
    assert recall_at(ranked, ["a", "b"], 1) == 0.5 and recall_at(ranked, ["a", "b"], 3) == 1.0
    assert reciprocal_rank(ranked, {"b"}) == pytest.approx(1 / 3)
    assert any_at(ranked, {"b"}, 2) == 0.0 and any_at(ranked, {"b"}, 3) == 1.0
    assert all_at(ranked, {"a", "b"}, 2) == 0.0 and all_at(ranked, {"a", "b"}, 3) == 1.0
    assert ndcg_at(["a", "b"], {"a", "b"}, 10) == pytest.approx(1.0)
    assert 0 < ndcg_at(["x", "a"], {"a"}, 10) < 1
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([5.0], 95) == 5.0
