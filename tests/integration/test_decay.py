"""Decay and forgetting (SPEC 6.3) on the real database, with an injected clock: each rule, the priority,
pinned memories, per-tenant thresholds, history kept, and the scheduler that runs it (once, however many
schedulers race); the receipts' retention under the same policy."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram import Engram, NotFoundError
from engram.errors import PermissionDenied, ValidationError
from engram.lifecycle.decay import Facts, priority
from engram.model.access import Principal
from engram.model.lifecycle import LifecyclePolicy
from engram.workers.jobs import periodic_jobs
from engram.workers.scheduler import Periodic, Scheduler

DAY = timedelta(days=1)


def later(engram: Engram, days: float) -> None:
    start = datetime.now(UTC)
    engram.clock = lambda: start + days * DAY


async def write(engram: Engram, text: str, **fields: Any) -> Any:
    return (await engram.remember(text, user_id="u1", **fields)).id


async def state(engram: Engram, mid: Any) -> tuple[str, bool]:
    """(status, expired) of a memory."""
    m = await engram.get(mid)
    return m.status, m.expires_at is not None and m.expires_at <= engram.clock()


def test_priority_weighs_importance_confidence_and_freshness() -> None:
    now = datetime.now(UTC)
    policy = LifecyclePolicy()

    def facts(importance: float, confidence: float, age: float, used: float | None) -> Facts:
        return Facts(uuid_0, "semantic", None, confidence, importance, now - age * DAY, now - age * DAY,
                     None if used is None else now - used * DAY, False, None, None)  # fmt: skip

    fresh, stale = facts(0.5, 0.8, 1, None), facts(0.5, 0.8, 720, None)
    assert priority(fresh, policy, now) > priority(stale, policy, now)
    assert priority(facts(0.5, 0.8, 720, 1), policy, now) > priority(stale, policy, now)  # recently used
    assert priority(facts(0.9, 0.8, 720, None), policy, now) > priority(stale, policy, now)
    assert priority(facts(0.5, 0.3, 720, None), policy, now) < priority(stale, policy, now)
    assert priority(stale, policy, now) >= 0.375  # the defaults never fade for their priority alone


uuid_0 = __import__("uuid").UUID(int=1)


async def test_each_rule_archives_or_expires_with_its_reason_and_history(engram: Engram) -> None:
    kept = await write(engram, "Invoices go out in EUR.", kind="semantic")
    faint = await write(engram, "Maybe the customer likes blue.", kind="episodic", importance=0.1, confidence=0.55)
    doubtful = await write(engram, "Might be on holiday in May.", kind="episodic", confidence=0.4)
    pref = await write(engram, "Prefers short answers.", kind="semantic", subtype="preference")
    working = await engram.remember("Step 2 of the refund is done.", kind="working", user_id="u1",
                                    workflow_id="wf-1")  # fmt: skip
    old_tool = await write(
        engram, "Balance: 120 EUR", kind="episodic", source={"type": "tool_result", "ref": "bank:acct-1"}
    )
    new_tool = await write(
        engram, "Balance: 80 EUR", kind="episodic", source={"type": "tool_result", "ref": "bank:acct-1"}
    )
    sensitive = await write(engram, "Reach them at ann@example.com.", kind="semantic")
    pinned = await write(engram, "Legal hold on case 7.", kind="episodic", importance=0.05, confidence=0.3,
                         policy={"retention_reason": "legal hold"})  # fmt: skip
    timed = await write(engram, "Offer valid this week.", kind="semantic",
                        expires_at=(datetime.now(UTC) + 2 * DAY).isoformat())  # fmt: skip

    later(engram, 1)
    first = await engram.decay()
    assert {(d.id, d.reason) for d in first.decisions} == {(old_tool, "source_changed")}
    assert await state(engram, old_tool) == ("active", True) and await state(engram, new_tool) == ("active", False)

    later(engram, 400)
    report = await engram.decay()
    reasons = {d.id: (d.action, d.reason) for d in report.decisions}
    assert reasons[faint] == ("archive", "low_priority")
    assert reasons[doubtful] == ("archive", "low_confidence_unused")
    assert reasons[pref] == ("archive", "preference_unused")
    assert reasons[working.id] == ("expire", "working_idle")
    assert reasons[sensitive] == ("expire", "sensitive_ttl")
    assert reasons[timed] == ("archive", "expired")
    assert reasons[old_tool] == ("archive", "expired")  # expired at the first pass, archived now
    assert kept not in reasons and pinned not in reasons and new_tool not in reasons and report.pinned >= 1
    assert (report.archived, report.expired) == (5, 2)
    assert (await state(engram, faint))[0] == "archived" and await state(engram, sensitive) == ("active", True)
    assert (await engram.get(sensitive)).policy.contains_pii
    history = await engram.history(faint)
    assert [h.change for h in history] == ["created", "archived"]  # archived, with its history
    async with engram.db.tenant("acme") as conn:
        query = "SELECT details FROM audit_events WHERE memory_id = %s AND action = 'memory.archived'"
        row = await (await conn.execute(query, [faint])).fetchone()
        total = await (await conn.execute("SELECT count(*) AS n FROM memories")).fetchone()
    assert row is not None and row["details"]["reason"] == "low_priority"
    assert total is not None and total["n"] == 10  # nothing is deleted
    await engram.unarchive(faint)  # still restorable
    assert (await engram.get(faint)).status == "active"
    again = await engram.decay()
    # The one brought back fades again; what expired at the last pass now leaves service.
    expected = {(faint, "low_priority"), (working.id, "expired"), (sensitive, "expired")}
    assert {(d.id, d.reason) for d in again.decisions} == expected
    assert again.archived == 3 and again.expired == 0


async def test_recent_use_keeps_a_memory_and_a_dry_run_changes_nothing(engram: Engram) -> None:
    faint = await write(engram, "Maybe the customer likes blue.", kind="episodic", importance=0.1, confidence=0.55)
    later(engram, 400)
    dry = await engram.decay(dry_run=True)
    assert dry.archived == 1 and (await engram.get(faint)).status == "active"
    async with engram.db.tenant("acme") as conn:  # recalled the day before
        await conn.execute("UPDATE memories SET last_used_at = %s WHERE id = %s", [engram.clock() - DAY, faint])
    assert (await engram.decay()).archived == 0


async def test_the_tenants_policy_decides(engram: Engram) -> None:
    plain = await write(engram, "The office cat is called Miso.", kind="semantic")
    later(engram, 400)
    assert (await engram.decay()).archived == 0  # 0.375 >= the default 0.3
    await engram.set_lifecycle_policy({"archive_below": 0.5})
    report = await engram.decay()
    assert report.archived == 1 and report.decisions[0].id == plain
    assert (await engram.lifecycle_policy()).archive_below == 0.5
    with pytest.raises(ValidationError) as bad:
        await engram.set_lifecycle_policy({"archive_below": 1.5})
    assert bad.value.field == "archive_below"
    with pytest.raises(ValidationError) as unknown:
        await engram.set_lifecycle_policy({"half_life": 3})
    assert unknown.value.field == "half_life"
    await engram.set_lifecycle_policy({"working_idle_days": None, "enabled": False})
    job = periodic_jobs(engram.settings)["decay"]
    assert await job.run(engram, "acme") == {"skipped": "disabled"}


async def test_the_scheduler_runs_each_tenants_job_once_however_many_race(engram: Engram) -> None:
    await write(engram, "Maybe the customer likes blue.", kind="episodic", importance=0.1, confidence=0.55)
    await engram.remember("Another tenant's note.", tenant="globex")
    calls: list[str] = []

    async def job(e: Any, tenant_id: str) -> dict[str, Any]:
        calls.append(tenant_id)
        await asyncio.sleep(0.2)  # long enough for the other schedulers to try the same rows
        return {"ok": True}

    schedulers = [Scheduler(engram, {"probe": Periodic(job, 3600)}, worker_id=f"w{i}") for i in range(3)]
    ran = await asyncio.gather(*(s.run_once() for s in schedulers))
    assert sorted(calls) == ["acme", "globex"] and sum(ran) == 2
    assert await asyncio.gather(*(s.run_once() for s in schedulers)) == [0, 0, 0]  # next run in an hour
    runs = {r["job"]: r for r in await engram.scheduled_runs()}
    assert runs["probe"]["runs"] == 1 and runs["probe"]["last_result"] == {"ok": True}
    assert runs["probe"]["leased_until"] is None and runs["probe"]["next_run_at"] > datetime.now(UTC)


async def test_decay_runs_on_schedule_in_the_background_jobs(engram: Engram) -> None:
    faint = await write(engram, "Maybe the customer likes blue.", kind="episodic", importance=0.1, confidence=0.55)
    later(engram, 400)
    scheduler = Scheduler(engram, periodic_jobs(engram.settings), poll=0.05)
    scheduler.start()
    try:
        for _ in range(200):
            if (await engram.get(faint)).status == "archived":
                break
            await asyncio.sleep(0.05)
    finally:
        await scheduler.stop()
    assert (await engram.get(faint)).status == "archived"
    runs = {r["job"]: r for r in await engram.scheduled_runs()}
    assert runs["decay"]["last_result"]["archived"] == 1 and "consolidate" in runs


async def test_a_failing_job_is_recorded_and_tried_again_later(engram: Engram) -> None:
    await engram.remember("A note.")

    async def broken(e: Any, tenant_id: str) -> dict[str, Any]:
        raise RuntimeError("boom")

    scheduler = Scheduler(engram, {"broken": Periodic(broken, 3600)})
    assert await scheduler.run_once() == 1
    (run,) = [r for r in await engram.scheduled_runs() if r["job"] == "broken"]
    assert run["last_error"] == "RuntimeError: boom" and run["leased_until"] is None


async def test_stopping_lets_the_run_under_way_finish_and_hands_back_the_rest(engram: Engram) -> None:
    await engram.remember("A note.")
    await engram.remember("Another tenant's note.", tenant="globex")
    started = asyncio.Event()
    calls: list[str] = []

    async def slow(e: Any, tenant_id: str) -> dict[str, Any]:
        calls.append(tenant_id)
        started.set()
        await asyncio.sleep(0.5)
        return {"done": tenant_id}

    scheduler = Scheduler(engram, {"slow": Periodic(slow, 3600)}, poll=0.05)
    scheduler.start()
    await asyncio.wait_for(started.wait(), 10)
    await scheduler.stop()
    assert len(calls) == 1  # the second leased run was not started
    (first,) = calls
    other = "globex" if first == "acme" else "acme"
    (done,) = [r for r in await engram.scheduled_runs(tenant=first) if r["job"] == "slow"]
    assert done["runs"] == 1 and done["last_result"] == {"done": first} and done["leased_until"] is None
    (handed,) = [r for r in await engram.scheduled_runs(tenant=other) if r["job"] == "slow"]
    assert handed["runs"] == 0 and handed["leased_until"] is None and handed["next_run_at"] <= datetime.now(UTC)
    # handed back, another scheduler runs it at once rather than when the lease would have run out
    assert await Scheduler(engram, {"slow": Periodic(slow, 3600)}).run_once() == 1 and calls[-1] == other


async def receipts_of(engram: Engram, tenant: str) -> list[Any]:
    await engram.retriever.receipts.settle()
    async with engram.db.owner() as conn:
        rows = await (await conn.execute(
            "SELECT id FROM recall_receipts WHERE tenant_id = %s ORDER BY created_at, id", [tenant]
        )).fetchall()  # fmt: skip
    return [r["id"] for r in rows]


async def age(engram: Engram, tenant: str, ids: list[Any], days: float) -> None:
    async with engram.db.owner() as conn:
        await conn.execute(
            "UPDATE recall_receipts SET created_at = now() - make_interval(secs => %s) WHERE tenant_id = %s"
            " AND id = ANY(%s)", [days * 86400, tenant, ids],
        )  # fmt: skip


async def test_receipts_older_than_the_policy_keeps_are_deleted_and_nothing_else(
    engram: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    await engram.remember("The warehouse ships pallets on Mondays.")
    await engram.remember("Globex ships on Fridays.", tenant="globex")
    answers = [await engram.recall(f"when does the warehouse ship {n}") for n in range(5)]
    await engram.recall("when does globex ship", tenant="globex")
    mine = await receipts_of(engram, "acme")
    assert sorted(mine) == sorted(a.receipt_id for a in answers)
    old, recent = [answers[n].receipt_id for n in range(3)], [answers[n].receipt_id for n in (3, 4)]
    await age(engram, "acme", old, 91)
    await age(engram, "acme", [recent[0]], 89)
    await age(engram, "globex", await receipts_of(engram, "globex"), 400)  # another tenant's: not this pass's

    looked = await engram.prune_receipts(dry_run=True)
    assert looked.deleted == 3 and looked.receipt_days == 90 and len(await receipts_of(engram, "acme")) == 5
    monkeypatch.setattr("engram.service.decay.RECEIPT_BATCH", 2)  # several batches, each its own transaction
    done = await engram.prune_receipts()
    assert done.deleted == 3 and done.before is not None and not done.dry_run
    assert sorted(await receipts_of(engram, "acme")) == sorted(recent)
    with pytest.raises(NotFoundError):
        await engram.receipt(old[0])
    assert (await engram.receipt(recent[0])).id == recent[0]
    assert len(await receipts_of(engram, "globex")) == 1
    assert (await engram.prune_receipts()).deleted == 0  # idempotent

    await engram.set_lifecycle_policy({"receipt_days": None})  # kept for ever
    await age(engram, "acme", recent, 5000)
    kept = await engram.prune_receipts()
    assert kept.deleted == 0 and kept.before is None and len(await receipts_of(engram, "acme")) == 2
    await engram.set_lifecycle_policy({"receipt_days": 1, "enabled": False})  # decay off: retention still on
    assert (await engram.prune_receipts()).deleted == 2


async def test_the_receipts_job_runs_on_schedule_for_every_tenant(engram: Engram) -> None:
    await engram.remember("The warehouse ships pallets on Mondays.")
    await engram.recall("when does the warehouse ship")
    await age(engram, "acme", await receipts_of(engram, "acme"), 100)
    assert "receipts" in periodic_jobs(engram.settings)
    scheduler = Scheduler(engram, {"receipts": periodic_jobs(engram.settings)["receipts"]})
    assert await scheduler.run_once() >= 1
    assert await receipts_of(engram, "acme") == []
    runs = {r["job"]: r for r in await engram.scheduled_runs()}
    assert runs["receipts"]["last_result"] == {"deleted": 1, "receipt_days": 90.0}


async def test_only_an_unbound_admin_prunes_receipts(engram: Engram) -> None:
    for role, user in (("agent", None), ("admin", "u1"), ("reviewer", None)):
        principal = Principal(tenant_id="acme", role=role, user_id=user)
        with pytest.raises(PermissionDenied):
            await engram.prune_receipts(principal=principal)
