"""The rule-based extractor over many sentences: what each rule keeps, with which kind, fact key and
confidence, and what it leaves out (filler, questions, small talk). No I/O."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.config import Settings
from engram.errors import ValidationError
from engram.extraction import (
    MAX_TEXT_CHARS,
    Candidate,
    ExtractionHints,
    ExtractRequest,
    RuleExtractor,
    build_extractor,
    to_input,
)
from engram.extraction.rules import CONFIDENT, HEDGED, OBSERVED, PROPOSED, sentences
from engram.extraction.rules import RULES as ALL_RULES
from engram.model.validation import parse

RULES = RuleExtractor()


def one(text: str, **hints: object) -> Candidate:
    found = RULES.extract_now(text, hints=ExtractionHints(**hints) if hints else None).candidates  # type: ignore[arg-type]
    assert len(found) == 1, [c.content for c in found]
    return found[0]


@pytest.mark.parametrize(
    ("sentence", "kind", "subtype", "fact_key"),
    [
        ("I prefer dark mode in every editor.", "semantic", "preference", None),
        ("I really like long walks on the beach.", "semantic", "preference", None),
        ("I love Thai food", "semantic", "preference", None),
        ("I hate meetings before 10am.", "semantic", "preference", None),
        ("I don't want marketing emails.", "semantic", "preference", None),
        ("I'd rather get a summary than the whole log.", "semantic", "preference", None),
        ("I never drink coffee after noon.", "semantic", "preference", None),
        ("My favourite colour is teal.", "semantic", "preference", "user.favourite_colour"),
        ("We decided to use PostgreSQL for the store.", "semantic", "decision", None),
        ("Let's go with the blue theme.", "semantic", "decision", None),
        ("We will use Terraform for the staging stack.", "semantic", "decision", None),
        ("The team agreed on weekly releases.", "semantic", "decision", None),
        ("Always answer in British English.", "procedural", "instruction", None),
        ("Please never deploy on Fridays.", "procedural", "instruction", None),
        ("From now on, cc my manager on invoices.", "procedural", "instruction", None),
        ("Remember that the office closes at 6pm.", "semantic", "fact", None),
        ("I live in Porto.", "semantic", "fact", "user.location"),
        ("I moved to Berlin last spring.", "semantic", "fact", "user.location"),
        ("I work at Globex.", "semantic", "fact", "user.employer"),
        ("I work as a nurse.", "semantic", "fact", "user.occupation"),
        ("My name is Jane Doe.", "semantic", "fact", "user.name"),
        ("My timezone is CET.", "semantic", "fact", "user.timezone"),
        ("My email address is jane@example.com.", "semantic", "fact", "user.email_address"),
        ("I speak Portuguese and German.", "semantic", "fact", "user.languages"),
        ("I'm allergic to peanuts.", "semantic", "fact", "user.allergies"),
        ("I'm a vegetarian.", "semantic", "fact", None),
        ("I have two cats.", "semantic", "fact", None),
        ("The deploy failed with error 504.", "episodic", "failure", None),
        ("The migration script didn't work on staging.", "episodic", "failure", None),
        ("Nightly backup timed out again.", "episodic", "failure", None),
        ("The importer crashed on a CSV with a BOM.", "episodic", "failure", None),
    ],
)
def test_each_rule_keeps_its_statement(sentence: str, kind: str, subtype: str, fact_key: str | None) -> None:
    c = one(sentence)
    assert (c.kind, c.subtype, c.fact_key) == (kind, subtype, fact_key)
    assert c.content == sentence and c.origin.startswith("rules:") and c.tags == [subtype]
    assert c.source_type == "user_message"


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "Thanks so much!",
        "hello there",
        "Hi! Thanks. Ok. Cool, got it.",
        "👍 🎉 !!!",
        "Can you book a table for two?",
        "Do I prefer tea?",
        "What is my timezone?",
        "The weather is nice today.",
        "I have a question.",
        "I'm a bit tired.",
        "I would like to book a flight.",
        "",
        "   \n\n  ",
    ],
)
def test_filler_questions_and_small_talk_are_left_out(text: str) -> None:
    assert RULES.extract_now(text).candidates == []


def test_confidence_follows_how_the_statement_was_made() -> None:
    assert one("I live in Porto.").confidence == CONFIDENT
    assert one("I think I live in Porto now.").confidence == HEDGED
    assert one("Maybe we decided to use Redis.").confidence == HEDGED
    assert one("The deploy failed.").confidence == OBSERVED
    assert one("Assistant: Let's go with Redis for the cache.").confidence == PROPOSED
    assert HEDGED < 0.75 <= PROPOSED + 0.05 < CONFIDENT  # a hedge is below the default semantic threshold


def test_a_conversation_is_read_speaker_by_speaker() -> None:
    text = "\n".join(
        [
            "User: Hi there! Thanks so much.",
            "User: I live in Porto. My email is jane@example.com. I prefer dark mode.",
            "User: Is it fast? ok",
            "Assistant: I prefer concise answers. The build failed on step 3.",
            "Tool: Error: connection refused on port 5432",
            "Alice: I live in Lisbon.",
            "Error: the deploy failed with status 504",
            "Always answer in British English.",
        ]
    )
    got = [(c.content, c.fact_key, c.origin) for c in RULES.extract_now(text).candidates]
    assert got == [
        ("I live in Porto.", "user.location", "rules:location"),
        ("My email is jane@example.com.", "user.email", "rules:attribute"),
        ("I prefer dark mode.", None, "rules:preference"),
        # the assistant's first person is not the user's: only its events count
        ("The build failed on step 3.", None, "rules:failure"),
        ("Error: connection refused on port 5432", None, "rules:failure"),
        # a named speaker may be somebody other than the user: named in the content, no fact key
        ("Alice: I live in Lisbon.", None, "rules:location"),
        ("Error: the deploy failed with status 504", None, "rules:failure"),
        ("Always answer in British English.", None, "rules:instruction"),
    ]


def test_a_tool_output_gives_only_failures() -> None:
    found = RULES.extract_now("Tool: I prefer JSON. We decided to retry. Request failed with 503.").candidates
    assert [c.content for c in found] == ["Request failed with 503."]


def test_labels_that_are_not_speakers_stay_in_the_sentence() -> None:
    assert sentences("Note: the cache is cold") == [("user", None, "Note: the cache is cold")]
    assert sentences("Bob Smith: I work at Initech") == [("person", "Bob Smith", "I work at Initech")]
    assert sentences("assistant: done.\nUSER: ok") == [("assistant", None, "done."), ("user", None, "ok")]


def test_curly_apostrophes_match_like_straight_ones() -> None:
    assert one("I don\u2019t want marketing emails.").subtype == "preference"
    assert one("I\u2019m allergic to peanuts.").fact_key == "user.allergies"


def test_hints_set_the_source_the_kinds_and_the_bound() -> None:
    text = "I live in Porto. The deploy failed. I prefer tea. Always use UTC. I work at Globex."
    only = RULES.extract_now(text, hints=ExtractionHints(kinds=("episodic",))).candidates
    assert [c.kind for c in only] == ["episodic"]
    limited = RULES.extract_now(text, hints=ExtractionHints(max_candidates=2))
    assert len(limited.candidates) == 2
    assert [d.reason for d in limited.dropped] == ["over the limit of 2 candidates"] * 3
    tool = RULES.extract_now("The deploy failed.", hints=ExtractionHints(source_type="tool_result")).candidates
    assert tool[0].source_type == "tool_result"


def test_a_repeated_statement_is_proposed_once() -> None:
    found = RULES.extract_now("I live in Porto.\nUser: I live in Porto.\ni live in porto.")
    assert len(found.candidates) == 1 and [d.reason for d in found.dropped] == ["repeats an earlier candidate"] * 2


async def test_the_async_interface_gives_the_same_answer() -> None:
    text = "I live in Porto. The build failed."
    assert await RULES.extract(text) == RULES.extract_now(text)
    assert RULES.name == "rules"
    await RULES.aclose()


def test_a_candidate_becomes_a_memory_input_in_its_scope() -> None:
    c = one("I live in Porto.")
    item = to_input(c, user_id="u1", agent_id="a1", session_id="s1", visibility="workflow", source_ref="chat:42")
    assert (item.kind, item.subtype, item.fact_key, item.confidence) == ("semantic", "fact", "user.location", 0.9)
    assert (item.user_id, item.agent_id, item.session_id, item.visibility) == ("u1", "a1", "s1", "workflow")
    assert item.source.type == "user_message" and item.source.ref == "chat:42"
    assert item.metadata == {"extracted_by": "rules:location"} and item.tags == ["fact"]


def test_the_request_names_each_bad_field() -> None:
    cases = [
        ({}, "text"),
        ({"text": ""}, "text"),
        ({"text": " \u200b "}, "text"),
        ({"text": "x" * (MAX_TEXT_CHARS + 1)}, "text"),
        ({"text": "I live in Porto", "max_candidates": 0}, "max_candidates"),
        ({"text": "I live in Porto", "kinds": ["semantic", "memes"]}, "kinds[1]"),
        ({"text": "I live in Porto", "source": {"type": "system_event"}}, "source.type"),
        ({"text": "I live in Porto", "user_id": " u1"}, "user_id"),
        ({"text": "I live in Porto", "commit": True}, "commit"),
    ]
    for body, field in cases:
        with pytest.raises(ValidationError) as refused:
            parse(ExtractRequest, body)
        assert refused.value.field == field, (body, refused.value.field)


def test_the_rules_are_the_default_extractor() -> None:
    def settings(**kw: object) -> Settings:
        return Settings(_env_file=None, data_dir=Path("/nonexistent"), **kw)  # type: ignore[arg-type]

    assert isinstance(build_extractor(settings(extractor="rules")), RuleExtractor)
    with pytest.raises(ValidationError) as refused:
        build_extractor(settings(extractor="llm", llm_url=None))
    assert refused.value.field == "llm_url" and "ENGRAM_LLM_URL" in refused.value.message


def test_the_rules_table_in_the_docs_matches_the_code() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "extraction.md").read_text(encoding="utf-8")
    lines = [line for line in doc.splitlines() if line.startswith("| `")]
    rows = [[c.strip().replace("`", "") for c in line.strip().strip("|").split("|")] for line in lines]
    documented = [(r[0], r[1], r[2], bool(r[3]), float(r[4])) for r in rows if r[0] in {x.name for x in ALL_RULES}]
    assert documented == [(r.name, r.kind, r.subtype, r.fact_key is not None, r.importance) for r in ALL_RULES]
