"""The write path against the real embedded PostgreSQL (SPEC 4.1-4.4)."""

from __future__ import annotations

import asyncio

import pytest

from engram import Engram, IdempotencyConflict, NotFoundError, RevisionConflict, ValidationError


async def test_replay_of_external_id_returns_same_row(engram: Engram) -> None:
    first = await engram.remember("Invoice 4411 was paid", external_id="evt-1")
    again = await engram.remember("Invoice   4411 was paid ", external_id="evt-1")  # same after normalising
    assert again.id == first.id
    assert again.replayed is True and first.replayed is False
    assert again.reasons == ["idempotent_replay"]
    page = await engram.list(external_id="evt-1")
    assert [m.id for m in page.items] == [first.id]


async def test_external_id_with_other_content_is_a_conflict_and_history_untouched(engram: Engram) -> None:
    first = await engram.remember("Invoice 4411 was paid", external_id="evt-1")
    with pytest.raises(IdempotencyConflict) as info:
        await engram.remember("Invoice 4411 was refunded", external_id="evt-1")
    assert info.value.existing_id == str(first.id)
    assert info.value.field == "external_id"
    history = await engram.history(first.id)
    assert [h.revision for h in history] == [1]
    assert (await engram.get(first.id)).content == "Invoice 4411 was paid"


async def test_external_id_is_scoped_by_agent(engram: Engram) -> None:
    a = await engram.remember("note from agent a", external_id="evt-9", agent_id="a")
    b = await engram.remember("note from agent b", external_id="evt-9", agent_id="b")
    assert a.id != b.id and not b.replayed


async def test_stale_revision_is_a_conflict(engram: Engram) -> None:
    w = await engram.remember("Ship to Berlin office")
    await engram.update(w.id, {"content": "Ship to Munich office"}, expected_revision=1)
    with pytest.raises(RevisionConflict) as info:
        await engram.update(w.id, {"content": "Ship to Hamburg office"}, expected_revision=1)
    assert info.value.current_revision == 2
    assert (await engram.get(w.id)).content == "Ship to Munich office"


async def test_two_racing_writers_are_both_accounted_for(engram: Engram) -> None:
    """Two devices edit the same memory from revision 1: one wins, the other gets a conflict, re-reads
    and re-applies; both edits end up in the history and nothing is lost."""
    w = await engram.remember("Tags for the account", tags=["base"])

    async def edit(tag: str) -> str:
        try:
            await engram.update(w.id, {"tags": ["base", tag]}, expected_revision=1)
            return "won"
        except RevisionConflict:
            current = await engram.get(w.id)
            await engram.update(w.id, {"tags": [*current.tags, tag]}, expected_revision=current.revision)
            return "retried"

    outcomes = await asyncio.gather(edit("phone"), edit("laptop"))
    assert sorted(outcomes) == ["retried", "won"]
    final = await engram.get(w.id)
    assert final.revision == 3
    assert set(final.tags) == {"base", "phone", "laptop"}
    history = await engram.history(w.id)
    assert [h.revision for h in history] == [1, 2, 3]
    assert [h.change for h in history] == ["created", "updated", "updated"]


async def test_twenty_concurrent_writes_of_one_fact_leave_one_active(engram: Engram) -> None:
    results = await asyncio.gather(
        *(
            engram.remember(f"Preferred currency is option {i}", kind="semantic", fact_key="currency", user_id="u1")
            for i in range(20)
        )
    )
    assert len({r.id for r in results}) == 20
    active = await engram.list(fact_key="currency", status="active")
    superseded = await engram.list(fact_key="currency", status="superseded")
    assert len(active.items) == 1
    assert len(superseded.items) == 19
    # The chain: every superseded memory points at the next one, ending at the active memory.
    by_id = {m.id: m for m in superseded.items}
    successors = {m.superseded_by for m in superseded.items}
    heads = [m for m in superseded.items if m.id not in successors]
    assert len(heads) == 1
    node = heads[0]
    seen = 1
    while node.superseded_by in by_id:
        assert node.valid_until is not None and node.valid_until <= by_id[node.superseded_by].valid_from
        node = by_id[node.superseded_by]
        seen += 1
    assert seen == 19
    assert node.superseded_by == active.items[0].id
    for m in superseded.items:
        history = await engram.history(m.id)
        assert [h.change for h in history] == ["created", "superseded"]


async def test_supersession_keeps_history_and_replaying_the_fact_is_a_noop(engram: Engram) -> None:
    old = await engram.remember("Invoices in EUR", kind="semantic", fact_key="invoice_currency", user_id="u")
    same = await engram.remember("Invoices in EUR", kind="semantic", fact_key="invoice_currency", user_id="u")
    assert same.id == old.id and same.replayed and same.reasons == ["fact_unchanged"]
    new = await engram.remember("Invoices in USD", kind="semantic", fact_key="invoice_currency", user_id="u")
    assert new.supersedes == [old.id]
    assert "superseded_previous" in new.reasons
    previous = await engram.get(old.id)
    assert previous.status == "superseded" and previous.superseded_by == new.id
    assert previous.valid_until is not None
    current = await engram.get(new.id)
    assert current.valid_from == previous.valid_until
    # Another user's fact with the same key is a different scope: untouched.
    other = await engram.remember("Invoices in JPY", kind="semantic", fact_key="invoice_currency", user_id="v")
    assert other.supersedes == []
    assert (await engram.get(new.id)).status == "active"


async def test_batch_is_atomic_per_item_and_reports_per_item(engram: Engram) -> None:
    await engram.remember("already here", external_id="dup")
    results = await engram.remember_many(
        [
            {"content": "first good item"},
            {"content": "   "},
            {"content": "different content", "external_id": "dup"},
            {"content": "second good item", "kind": "semantic", "fact_key": "k"},
            {"content": "bad confidence", "confidence": 1.5},
        ]
    )
    assert [type(r).__name__ for r in results] == [
        "WriteResult",
        "ValidationError",
        "IdempotencyConflict",
        "WriteResult",
        "ValidationError",
    ]
    page = await engram.list(limit=10)
    assert {m.content for m in page.items} == {"already here", "first good item", "second good item"}


async def test_every_change_is_in_history_and_audit(engram: Engram) -> None:
    w = await engram.remember("Meeting moved to Friday")
    await engram.update(w.id, {"importance": 0.9}, expected_revision=1)
    await engram.archive(w.id)
    history = await engram.history(w.id)
    assert [(h.revision, h.change) for h in history] == [(1, "created"), (2, "updated"), (3, "archived")]
    assert history[1].snapshot.importance == 0.9  # as sent: stored in double precision
    async with engram.db.tenant("acme") as conn:
        rows = await (
            await conn.execute(
                "SELECT action FROM audit_events WHERE tenant_id = 'acme' AND memory_id = %s ORDER BY at",
                [w.id],
            )
        ).fetchall()
    assert [r["action"] for r in rows] == ["memory.created", "memory.updated", "memory.archived"]


async def test_delete_removes_content_and_leaves_a_tombstone(engram: Engram) -> None:
    w = await engram.remember("The door code is 4711")
    await engram.delete(w.id)
    with pytest.raises(NotFoundError):
        await engram.get(w.id)
    async with engram.db.tenant("acme") as conn:
        left = await (
            await conn.execute(
                "SELECT (SELECT count(*) FROM memory_revisions WHERE memory_id = %(id)s) AS revs,"
                " (SELECT count(*) FROM memory_embeddings WHERE memory_id = %(id)s) AS vecs,"
                " (SELECT details::text FROM audit_events WHERE memory_id = %(id)s AND action = 'memory.deleted')"
                " AS tomb",
                {"id": w.id},
            )
        ).fetchone()
    assert left is not None
    assert left["revs"] == 0 and left["vecs"] == 0
    assert left["tomb"] is not None and "4711" not in left["tomb"]


async def test_validation_names_the_field(engram: Engram) -> None:
    cases = {
        "content": {"content": ""},
        "kind": {"content": "x y", "kind": "dream"},
        "confidence": {"content": "x y", "confidence": 1.5},
        "valid_until": {
            "content": "x y",
            "valid_from": "2026-01-02T00:00:00Z",
            "valid_until": "2026-01-01T00:00:00Z",
        },
    }
    for field, item in cases.items():
        with pytest.raises(ValidationError) as info:
            await engram.remember(item)
        assert info.value.field == field, (field, info.value)
    with pytest.raises(ValidationError) as info:
        await engram.remember("a" * 12_001)
    assert info.value.field == "content" and "12000" in info.value.message
    # 12,000 characters after normalisation is fine, even if the raw text is longer.
    ok = await engram.remember("  " + "a" * 12_000 + "   ")
    assert (await engram.get(ok.id)).content == "a" * 12_000
