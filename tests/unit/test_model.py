"""Domain rules without I/O: normalisation, hashing, validation messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import MemoryInput, MemoryPatch, ValidationError
from engram.model import content_hash, normalise_whitespace
from engram.model.validation import parse


def test_whitespace_normalisation_keeps_lines() -> None:
    raw = "  Step 1:\tcheck   invoice \r\n\r\n\r\n\nStep 2:  refund\u00a0policy  "
    assert normalise_whitespace(raw) == "Step 1: check invoice\n\nStep 2: refund policy"


def test_hash_is_of_normalised_content() -> None:
    a = MemoryInput(content="hello   world")
    b = MemoryInput(content=" hello world\n")
    assert a.content_hash == b.content_hash == content_hash("hello world")
    assert len(a.content_hash) == 64


def test_nfc_normalisation_makes_equal_text_equal() -> None:
    composed = MemoryInput(content="caf\u00e9")
    decomposed = MemoryInput(content="cafe\u0301")
    assert composed.content_hash == decomposed.content_hash


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"content": ""}, "content", "empty"),
        ({"content": " \t\n "}, "content", "empty"),
        ({"content": "x" * 12_001}, "content", "12001"),
        ({"content": "ok", "kind": "dream"}, "kind", "'semantic'"),
        ({"content": "ok", "confidence": 1.5}, "confidence", "less than or equal to 1"),
        ({"content": "ok", "confidence": float("nan")}, "confidence", "finite"),
        ({"content": "ok", "user_id": "bad\nid"}, "user_id", "control"),
        ({"content": "ok", "fact_key": "has space"}, "fact_key", "pattern"),
        ({"content": "ok", "metadata": {"blob": "x" * 20_000}}, "metadata", "16384"),
        ({"content": "ok", "tags": ["t"] * 65}, "tags", "64"),
        ({"content": "ok", "source": {"type": "user_message", "uri": "x"}}, "source.uri", "Extra"),
    ],
)
def test_validation_names_field_and_rule(data: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse(MemoryInput, data)
    assert info.value.field == field
    assert words in info.value.message


def test_validity_window() -> None:
    now = datetime.now(UTC)
    with pytest.raises(ValidationError) as info:
        parse(MemoryInput, {"content": "ok", "valid_from": now, "valid_until": now})
    assert info.value.field == "valid_until"
    with pytest.raises(ValidationError):
        parse(MemoryInput, {"content": "ok", "valid_until": now - timedelta(days=1)})
    ok = parse(MemoryInput, {"content": "ok", "valid_until": now + timedelta(days=1)})
    assert ok.valid_until is not None


def test_naive_timestamps_are_utc() -> None:
    m = parse(MemoryInput, {"content": "ok", "valid_from": "2026-01-01T10:00:00"})
    assert m.valid_from == datetime(2026, 1, 1, 10, tzinfo=UTC)


def test_tags_are_deduplicated_in_order() -> None:
    assert MemoryInput(content="ok", tags=["b", "a", "b"]).tags == ["b", "a"]


def test_patch_rules() -> None:
    with pytest.raises(ValidationError) as info:
        parse(MemoryPatch, {})
    assert "at least one field" in info.value.message
    with pytest.raises(ValidationError) as info:
        parse(MemoryPatch, {"kind": None})
    assert info.value.field == "kind"
    p = parse(MemoryPatch, {"summary": None, "content": "  new   text "})
    assert p.changes() == {"summary": None, "content": "new text"}
