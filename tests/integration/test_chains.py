"""Supersession chains stay consistent through every change: a superseded or deleted memory cannot be
changed (NotCurrent names the current one), a deletion mends its chain, unarchiving respects the fact."""

from __future__ import annotations

import asyncio

import pytest

from engram import Engram, NotFoundError
from engram.errors import NotCurrent, PermissionDenied
from engram.model.access import Principal


async def chain(engram: Engram, *values: str) -> list[str]:
    ids = []
    for v in values:
        ids.append(str((await engram.remember(f"Invoices go out in {v}", kind="semantic", fact_key="currency")).id))
    return ids


async def test_a_superseded_memory_cannot_change_and_names_the_current_one(engram: Engram) -> None:
    eur, _usd, gbp = await chain(engram, "EUR", "USD", "GBP")
    old = await engram.get(eur)
    with pytest.raises(NotCurrent) as caught:
        await engram.update(eur, {"content": "Invoices go out in CHF"}, expected_revision=old.revision)
    assert caught.value.current_id == gbp  # the end of the chain, not the next link
    assert caught.value.code == "not_current" and gbp in caught.value.message
    assert (await engram.get(eur)).revision == old.revision


async def test_a_deleted_memory_cannot_change_and_says_so(engram: Engram) -> None:
    note = await engram.remember("Temporary note")
    await engram.delete(note.id)
    with pytest.raises(NotCurrent) as caught:
        await engram.update(note.id, {"content": "Edited"}, expected_revision=1)
    assert caught.value.current_id is None and "deleted" in caught.value.message
    with pytest.raises(NotCurrent):
        await engram.archive(note.id)
    with pytest.raises(NotFoundError):
        await engram.get(note.id)  # reads say it is not there


async def test_deleting_the_current_fact_restores_its_predecessor(engram: Engram) -> None:
    eur, usd = await chain(engram, "EUR", "USD")
    before = await engram.get(eur)
    assert before.status == "superseded" and before.valid_until is not None
    await engram.delete(usd)
    back = await engram.get(eur)
    assert (back.status, back.superseded_by, back.valid_until) == ("active", None, None)
    assert [h.change for h in await engram.history(eur)] == ["created", "superseded", "restored"]
    recalled = await engram.recall("which currency do invoices use?")
    assert [str(i.id) for i in recalled.items] == [eur]
    with pytest.raises(NotCurrent) as caught:  # the deleted one points at the fact's holder now
        await engram.update(usd, {"importance": 0.1}, expected_revision=1)
    assert caught.value.current_id == eur
    # And the fact can move on again from there.
    chf = await engram.remember("Invoices go out in CHF", kind="semantic", fact_key="currency")
    assert chf.supersedes == [back.id]


async def test_deleting_a_link_in_the_middle_repoints_the_chain(engram: Engram) -> None:
    eur, usd, gbp = await chain(engram, "EUR", "USD", "GBP")
    await engram.delete(usd)
    first = await engram.get(eur)
    assert first.status == "superseded" and str(first.superseded_by) == gbp
    page = await engram.list(fact_key="currency")
    ids = {str(m.id) for m in page.items}
    assert ids == {eur, gbp}
    assert all(m.superseded_by is None or str(m.superseded_by) in ids for m in page.items)


async def test_unarchive_brings_a_memory_back_unless_its_fact_moved_on(engram: Engram) -> None:
    note = await engram.remember("Door code changes monthly")
    await engram.archive(note.id)
    back = await engram.unarchive(note.id)
    assert (back.status, back.revision) == ("active", 3)
    assert (await engram.unarchive(note.id)).revision == 3  # idempotent
    (eur,) = await chain(engram, "EUR")
    await engram.archive(eur)
    (usd,) = await chain(engram, "USD")
    with pytest.raises(NotCurrent) as caught:
        await engram.unarchive(eur)
    assert caught.value.current_id == usd
    agent = Principal(tenant_id="acme", role="agent", key_id=note.id)
    with pytest.raises(PermissionDenied):
        await engram.unarchive(note.id, principal=agent)


async def test_a_replay_says_truthfully_whether_the_memory_has_a_vector(engram: Engram) -> None:
    deferred = await engram.remember("embedded later", external_id="e1", embed="deferred")
    assert deferred.embedded is False
    again = await engram.remember("embedded later", external_id="e1")
    assert again.replayed and again.embedded is False
    await engram.enrich_pending()
    third = await engram.remember("embedded later", external_id="e1")
    assert third.replayed and third.embedded is True


async def test_batch_errors_name_the_item_in_the_library_too(engram: Engram) -> None:
    results = await engram.remember_many(
        [{"content": "the printer is fixed"}, {"content": ""}, {"content": "x", "kind": "dream"}]
    )
    errors = [getattr(r, "field", None) for r in results]
    assert errors == [None, "items[1].content", "items[2].kind"]


async def test_concurrent_deletes_in_one_chain_leave_it_whole(engram: Engram) -> None:
    """Each delete takes its fact's lock, as writes of the fact do: two deletes of neighbouring links never
    leave a pointer at a memory that is gone (6 of 10 trials did before)."""
    for trial in range(5):
        key = f"plan{trial}"
        ids = [(await engram.remember(f"plan {trial} version {v}", kind="semantic", fact_key=key)).id for v in range(4)]
        await asyncio.gather(engram.delete(ids[1]), engram.delete(ids[2]))
        page = await engram.list(fact_key=key)
        left = {m.id: m for m in page.items}
        assert set(left) == {ids[0], ids[3]}
        assert left[ids[0]].superseded_by == ids[3] and left[ids[3]].status == "active"


async def test_archiving_and_unarchiving_a_superseded_memory_keeps_the_chain(engram: Engram) -> None:
    _v1, v2, v3 = await chain(engram, "A", "B", "C")
    await engram.archive(v2)
    await engram.archive(v3)
    back = await engram.unarchive(v2)
    assert (back.status, str(back.superseded_by)) == ("superseded", v3)  # as it was before archiving
    with pytest.raises(NotCurrent):
        await engram.update(v2, {"importance": 0.9}, expected_revision=back.revision)
    head = await engram.unarchive(v3)
    assert head.status == "active"
    active = (await engram.list(fact_key="currency", status="active")).items
    assert [str(m.id) for m in active] == [v3]


async def test_a_deleted_memory_another_user_owned_answers_as_missing(engram: Engram) -> None:
    theirs = await engram.remember("u2's fact", kind="semantic", fact_key="pet", user_id="u2")
    await engram.remember("u2's newer fact", kind="semantic", fact_key="pet", user_id="u2")
    await engram.delete(theirs.id)
    u1 = Principal(tenant_id="acme", role="agent", key_id=theirs.id, user_id="u1")
    with pytest.raises(NotFoundError):  # not "deleted; memory X holds its fact now"
        await engram.update(theirs.id, {"importance": 0.1}, expected_revision=1, principal=u1)
    u2 = Principal(tenant_id="acme", role="agent", key_id=theirs.id, user_id="u2")
    with pytest.raises(NotCurrent):
        await engram.update(theirs.id, {"importance": 0.1}, expected_revision=1, principal=u2)
