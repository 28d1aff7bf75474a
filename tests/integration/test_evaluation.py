"""The LoCoMo harness end to end on a tiny conversation in LoCoMo's format, through the real write and
recall paths."""

from __future__ import annotations

from engram import Engram
from engram.evaluation import locomo

SAMPLE = {
    "sample_id": "conv-test",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Bram",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I started pottery classes on Tuesdays."},
            {"speaker": "Bram", "dia_id": "D1:2", "text": "Nice! I adopted a cat named Miso."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Miso is a lovely name.", "blip_caption": "a grey cat"},
        ],
        "session_2_date_time": "9:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Bram", "dia_id": "D2:1", "text": "I ran my first marathon in Berlin."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Congratulations on the marathon!"},
        ],
    },
    "qa": [
        {"question": "What pet did Bram adopt?", "answer": "a cat", "evidence": ["D1:2"], "category": 4},
        {"question": "Where did Bram run a marathon?", "answer": "Berlin", "evidence": ["D2:1"], "category": 4},
        {"question": "When did Ana start pottery?", "answer": "May 2023", "evidence": ["D1:1"], "category": 2},
        {"question": "What did Ana adopt?", "adversarial_answer": "a cat", "evidence": ["D1:2"], "category": 5},
        {"question": "Unresolvable evidence", "answer": "-", "evidence": ["D9:9"], "category": 1},
    ],
}


async def test_locomo_harness_end_to_end(engram: Engram) -> None:
    result = await locomo.evaluate(engram, [SAMPLE], "hybrid")
    assert result["questions"] == 3  # category 5 reported apart; unresolvable evidence dropped
    assert result["all_categories"]["questions"] == 4
    assert result["recall@5"] == 1.0
    assert set(result["per_category"]) == {"2-temporal", "4-single-hop", "5-adversarial"}
    assert result["latency_ms"]["p50"] > 0
    again = await locomo.evaluate(engram, [SAMPLE], "lexical")  # re-ingestion is an idempotent replay
    assert again["questions"] == 3
    page = await engram.list(tenant="locomo-conv-test", limit=50)
    assert len(page.items) == 5
    turn = next(m for m in page.items if m.external_id == "D1:3")
    assert turn.content == "Ana: Miso is a lovely name. [photo: a grey cat]"
    assert turn.metadata["speaker"] == "Ana" and turn.session_id == "session_1"


async def test_summarise_harness_end_to_end(engram: Engram) -> None:
    from engram.evaluation import summarise

    result = await summarise.evaluate(engram, [SAMPLE], "hybrid")
    assert result["questions"] == 3 and result["recall@10_raw"] == 1.0
    assert result["recall@10_summaries"] == 1.0  # every evidence turn kept a statement, found again
    assert result["turns"] == 5 and 0 < result["summaries"] < 5  # "Congratulations ..." and the like go
    assert 0 < result["char_ratio"] < 1
    page = await engram.list(tenant="locomo-sum-conv-test", limit=50, status="archived")
    assert len(page.items) == 5  # the raw turns stay, archived
    summaries = await engram.list(tenant="locomo-sum-conv-test", limit=50, status="active")
    for s in summaries.items:
        assert s.subtype == "summary" and s.metadata["derived_from"].startswith("D")
