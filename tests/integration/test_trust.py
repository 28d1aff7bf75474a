"""Recall an agent can trust: the verified fact above the guess, disagreements marked, a relevance floor that one
shared name does not clear. With the real MiniLM weights: the floor is about what a real model finds close."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from engram import Engram, ValidationError
from engram.providers.local import LocalMiniLM
from tests.conftest import settings_for


class SharedMiniLM(LocalMiniLM):
    """Loaded once for the module; an Engram closing does not stop it."""

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def minilm() -> Iterator[LocalMiniLM]:
    model = SharedMiniLM(runtime="torch")
    model.load()
    yield model
    model._executor.shutdown(wait=False)


@pytest.fixture
async def engram(database_url: str, minilm: LocalMiniLM) -> AsyncIterator[Engram]:
    mem = await Engram.open(settings_for(database_url), embedder=minilm, tenant="acme")
    try:
        yield mem
    finally:
        await mem.close()


async def test_a_verified_fact_ranks_above_a_guess_about_the_same_thing(engram: Engram) -> None:
    guess = await engram.remember(
        "Invoice INV-77 is probably still unpaid", source={"type": "agent_inference"}, confidence=0.76
    )
    paid = await engram.remember(
        "Invoice INV-77 was paid in full on 2026-11-02", source={"type": "tool_result"}, confidence=1.0
    )
    result = await engram.recall("Has invoice INV-77 been paid?")
    assert [i.id for i in result.items[:2]] == [paid.id, guess.id]
    assert result.items[0].trust == 1.0 and result.items[1].trust == 0.5
    assert result.packet.splitlines()[2].startswith("[2] ") and " guess: " in result.packet.splitlines()[2]
    # Trust is the tenant's to set: told that its agent's inferences are as good as tool results, and its
    # tools unreliable, recall ranks by relevance and confidence again.
    settings = await engram.update_tenant({"source_trust": {"agent_inference": 1.0, "tool_result": 0.3}})
    assert settings.source_trust["agent_inference"] == 1.0 and settings.source_trust["user_message"] == 0.8
    again = await engram.recall("Has invoice INV-77 been paid?")
    assert [i.id for i in again.items[:2]] == [guess.id, paid.id]


async def test_disagreeing_items_are_marked_and_the_better_sourced_ranks_first(engram: Engram) -> None:
    old = await engram.remember("The staging deploy runs every Wednesday evening", user_id="u1")
    new = await engram.remember(
        "The staging deploy runs every Thursday evening", source={"type": "tool_result"}, user_id="u1"
    )
    result = await engram.recall("When does the staging deploy run?", user_id="u1")
    assert [i.id for i in result.items] == [new.id, old.id]
    assert result.items[0].conflicts_with == [old.id] and result.items[1].conflicts_with == [new.id]
    assert result.packet.splitlines()[2].startswith("[2] ") and "≠[1]: The staging deploy" in result.packet
    receipt = await engram.receipt(result.receipt_id)
    assert receipt.selected[1]["conflicts_with"] == [str(new.id)]

    # A relation says so, whatever the wording.
    a = await engram.remember("Jane's manager is Tom Okafor", user_id="u2")
    b = await engram.remember("Jane reports to Priya Raman since the reorganisation", user_id="u2")
    await engram.relate({"src_id": b.id, "dst_id": a.id, "type": "contradicts"})
    engram.retriever.forget_corpus("acme")  # the tenant's first such relation is noticed within 30 s
    marked = await engram.recall("Who is Jane's manager?", user_id="u2")
    by_id = {i.id: i for i in marked.items}
    assert by_id[a.id].conflicts_with == [b.id] and by_id[b.id].conflicts_with == [a.id]

    # The same statement with the same names and numbers is no conflict.
    calm = await engram.recall("When does the staging deploy run?", user_id="u3")
    assert all(not i.conflicts_with for i in calm.items)


async def test_one_shared_name_does_not_drag_in_unrelated_memories(engram: Engram) -> None:
    wanted = await engram.remember("Jane prefers to be contacted by email, never by phone", user_id="jane")
    await engram.remember_many(
        [
            {"content": f"Ticket {n}: Jane reported that {issue}", "user_id": "jane"}
            for n, issue in enumerate(
                [
                    "the printer on floor 3 jams",
                    "the VPN drops after lunch",
                    "her laptop fan is loud",
                    "the expense report form fails to upload",
                    "the badge reader at door B is broken",
                    "the shared calendar shows the wrong time zone",
                ],
                start=4410,
            )
        ]
    )
    result = await engram.recall("how does Jane want to be contacted?", user_id="jane")
    assert [i.id for i in result.items] == [wanted.id]
    assert not result.abstain


async def test_trust_settings_are_checked(engram: Engram) -> None:
    with pytest.raises(ValidationError) as bad:
        await engram.update_tenant({"source_trust": {"rumour": 0.1}})
    assert "source_trust" in (bad.value.field or "")
    with pytest.raises(ValidationError) as high:
        await engram.update_tenant({"source_trust": {"tool_result": 1.5}})
    assert "source_trust" in (high.value.field or "")
    with pytest.raises(ValidationError):
        await engram.update_tenant({})
