"""Consolidation (SPEC 6.4) on the real database: repeated episodes become one fact derived from them; a
second run changes nothing; a grown group supersedes its earlier fact; two consolidations of one agent never
both write; users, agents and non-active episodes are kept apart."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engram import Engram
from engram.errors import ValidationError


async def counts(engram: Engram) -> dict[str, int]:
    async with engram.db.tenant("acme") as conn:
        out: dict[str, int] = {}
        for table in ("memories", "memory_revisions", "relations", "audit_events"):
            row = await (await conn.execute(f"SELECT count(*) AS n FROM {table}")).fetchone()
            out[table] = row["n"] if row else 0
        return out


async def say(engram: Engram, text: str, user: str = "u1", **more: Any) -> Any:
    return await engram.remember(text, kind="episodic", user_id=user, **more)


async def derived(engram: Engram, fact_id: Any) -> set[Any]:
    async with engram.db.tenant("acme") as conn:
        query = "SELECT dst_id FROM relations WHERE src_id = %s AND type = 'derived_from'"
        rows = await (await conn.execute(query, [fact_id])).fetchall()
    return {r["dst_id"] for r in rows}


async def test_repeated_episodes_become_one_fact_and_a_second_run_is_a_no_op(engram: Engram) -> None:
    # Said three times in other words (the write path would merge word-for-word repeats, see below).
    said = ("Prefers invoices in EUR.", "prefers invoices in EUR!", "user: Prefers invoices in EUR")
    ids = [(await say(engram, t)).id for t in said]
    await say(engram, "The Xero export failed once.")
    assert len(set(ids)) == 3
    report = await engram.consolidate()
    assert (report.episodes, report.groups, report.created, report.links_added) == (4, 1, 1, 3)
    (fact,) = report.facts
    assert fact.outcome == "created" and set(fact.evidence) == set(ids) and fact.user_id == "u1"
    stored = await engram.get(fact.id)
    assert stored.kind == "semantic" and stored.subtype == "consolidated" and stored.user_id == "u1"
    assert stored.metadata["evidence_count"] == 3 and stored.confidence == pytest.approx(0.817)
    assert stored.fact_key is not None and stored.fact_key.startswith("consolidated.")
    assert await derived(engram, fact.id) == set(ids)
    for i in ids:  # the episodes stay: they are the evidence
        assert (await engram.get(i)).status == "active"

    before = await counts(engram)
    again = await engram.consolidate()
    assert (again.groups, again.created, again.links_added) == (1, 0, 0)
    assert again.facts[0].outcome == "unchanged" and again.facts[0].id == fact.id
    assert await counts(engram) == before  # not a row more, not a revision, not an audit event


async def test_word_for_word_repeats_merged_by_the_write_path_count_as_evidence(engram: Engram) -> None:
    first = await say(engram, "Prefers invoices in EUR.")
    for _ in range(2):
        repeat = await say(engram, "Prefers invoices in EUR.")
        assert repeat.id == first.id  # merged, with its source kept
    report = await engram.consolidate()
    assert report.created == 1 and report.facts[0].evidence == [first.id]
    assert (await engram.get(report.facts[0].id)).metadata["evidence_count"] == 3


async def test_too_few_or_not_active_episodes_make_no_fact(engram: Engram) -> None:
    await say(engram, "Prefers tea in the morning.")
    await say(engram, "prefers tea in the morning")
    assert (await engram.consolidate()).created == 0  # two mentions: below the default three
    third = await say(engram, "Prefers tea in the morning!")
    await engram.archive(third.id)
    assert (await engram.consolidate()).groups == 0  # an archived episode is not evidence
    assert (await engram.consolidate(min_episodes=2)).created == 1


async def test_more_evidence_restates_the_fact_and_a_new_statement_supersedes_it(engram: Engram) -> None:
    for t in ("Works from the Berlin office.", "works from the berlin office", "Works from the Berlin office!"):
        await say(engram, t)
    first = (await engram.consolidate()).facts[0]
    await say(engram, first.content)  # said once more, word for word: merged into that episode
    grown = (await engram.consolidate()).facts[0]
    assert grown.outcome == "evidence_updated" and grown.id == first.id
    restated = await engram.get(first.id)
    assert restated.revision == 2 and restated.metadata["evidence_count"] == 4 and restated.confidence > 0.817
    assert (await engram.consolidate()).facts[0].outcome == "unchanged"
    # The group now mostly says it another way (repeats kept apart): its fact gets a new version.
    await engram.update_admission_policy({"deduplicate": []})
    for _ in range(6):
        await say(engram, "WORKS FROM THE BERLIN OFFICE")
    (newer,) = (await engram.consolidate()).facts
    assert newer.outcome == "superseded_previous" and newer.content == "WORKS FROM THE BERLIN OFFICE"
    assert len(newer.evidence) == 9
    earlier = await engram.get(first.id)
    assert earlier.status == "superseded" and earlier.superseded_by == newer.id  # never erased
    assert [h.change for h in await engram.history(first.id)][-1] == "superseded"
    assert len(await derived(engram, newer.id)) == 9


async def test_a_fact_the_user_stated_is_superseded_by_the_consolidated_one(engram: Engram) -> None:
    """Older facts with the same key are superseded, never erased."""
    for t in ("Prefers email over phone.", "prefers email over phone", "Prefers email over phone!"):
        await say(engram, t)
    key = (await engram.consolidate(dry_run=True)).facts[0]
    assert key.id is None
    from engram.lifecycle.consolidate import Episode, Group

    g = Group()
    for e in key.evidence:
        m = await engram.get(e)
        g.add(Episode(m.id, m.content, m.recorded_at, None), m.content)
    stated = await engram.remember("Prefers phone calls.", kind="semantic", user_id="u1", fact_key=g.key())
    (fact,) = (await engram.consolidate()).facts
    assert fact.outcome == "superseded_previous"
    old = await engram.get(stated.id)
    assert old.status == "superseded" and old.superseded_by == fact.id and old.content == "Prefers phone calls."


async def test_users_agents_and_visibility_are_never_merged(engram: Engram) -> None:
    for user in ("u1", "u2"):
        for t in ("Likes dark mode.", "likes dark mode", "Likes dark mode!"):
            await say(engram, t, user=user)
    for t in ("Likes dark mode.", "likes dark mode", "Likes dark mode!"):
        await say(engram, t, user="u1", agent_id="billing-bot")
    report = await engram.consolidate()
    assert sorted(f.user_id for f in report.facts) == ["u1", "u2"]  # one fact per user, the agent-less ones
    for f in report.facts:
        owners = {(await engram.get(e)).user_id for e in f.evidence}
        assert owners == {f.user_id}
    agent = await engram.consolidate(agent_id="billing-bot")
    assert agent.created == 1 and (await engram.get(agent.facts[0].id)).agent_id == "billing-bot"


async def test_two_consolidations_of_one_agent_never_both_write(engram: Engram) -> None:
    for t in ("Prefers invoices in EUR.", "prefers invoices in EUR!", "Prefers invoices in EUR"):
        await say(engram, t)
    first, second = await asyncio.gather(engram.consolidate(), engram.consolidate())
    assert sorted([first.skipped_locked, second.skipped_locked]) in ([False, True], [False, False])
    assert first.created + second.created == 1  # whichever ran second (if any) found the fact written
    facts = [m for m in (await engram.list(kind="semantic")).items if m.subtype == "consolidated"]
    assert len(facts) == 1


async def test_another_agent_is_not_held_up_by_a_running_consolidation(engram: Engram) -> None:
    from engram.store import consolidation as store

    async with engram.db.tenant("acme") as conn:
        assert await store.try_lock(conn, "acme", None)  # a consolidation of the agent-less episodes runs
        held = await engram.consolidate()
        other = await engram.consolidate(agent_id="billing-bot")
    assert held.skipped_locked and not other.skipped_locked


async def test_a_dry_run_writes_nothing(engram: Engram) -> None:
    for t in ("Prefers invoices in EUR.", "prefers invoices in EUR!", "Prefers invoices in EUR"):
        await say(engram, t)
    before = await counts(engram)
    report = await engram.consolidate(dry_run=True)
    assert report.groups == 1 and report.facts[0].outcome == "dry_run" and report.facts[0].id is None
    assert await counts(engram) == before


async def test_bad_input_names_the_field(engram: Engram) -> None:
    for bad in (1, 101):
        with pytest.raises(ValidationError) as refused:
            await engram.consolidate(min_episodes=bad)
        assert refused.value.field == "min_episodes"
