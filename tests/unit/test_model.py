"""Domain rules without I/O: normalisation, hashing, validation messages."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel, Field

from engram import MemoryInput, MemoryPatch, ValidationError
from engram.model import Source, content_hash, normalise_whitespace
from engram.model.recall import RecallItem, trusted
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


def test_trusted_construction_is_model_construct() -> None:
    now = datetime.now(UTC)
    values = {
        "id": uuid.uuid4(), "content": "Error 504 on the gateway", "summary": None, "kind": "episodic",
        "source": Source(type="tool_result", ref="run-7"), "recorded_at": now, "valid_from": now - timedelta(days=2),
        "confidence": 0.8, "importance": 0.5, "score": 0.91, "ranks": {"lexical": 1}, "signals": {"lexical": 3.2},
        "reasons": ["lexical#1"], "require_citation": True, "ref": 1, "trust": 1.0, "conflicts_with": [],
    }  # fmt: skip
    fast, slow = trusted(RecallItem, dict(values)), RecallItem.model_construct(**values)
    assert fast == slow
    assert fast.model_dump(mode="json") == slow.model_dump(mode="json")
    assert fast.model_fields_set == slow.model_fields_set
    assert RecallItem.model_validate(fast.model_dump()) == fast  # the values were valid, and still are


def test_trusted_construction_refuses_what_it_cannot_build() -> None:
    with pytest.raises(TypeError, match=re.escape("missing ['ref']")):
        trusted(Source, {"type": "user_message"})  # not every field named
    with pytest.raises(TypeError, match=re.escape("unknown ['colour']")):
        trusted(Source, {"type": "user_message", "ref": None, "colour": "red"})

    class Aliased(BaseModel):
        name: str = Field(alias="Name")

    with pytest.raises(TypeError, match="not a plain model"):
        trusted(Aliased, {"name": "x"})
