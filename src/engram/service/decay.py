"""Decay and forgetting (SPEC 6.3) as a service operation: the tenant's lifecycle policy, and a pass that
archives what fell below it and expires what its rules end (each change a revision with its reason in the
audit trail; no memory is deleted: deletion is a policy decision, taken by a person). The same policy says
how long recall receipts are kept (``receipt_days``), and a pass of its own deletes the older ones."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from engram.lifecycle.decay import Facts, decide, pinned, priority
from engram.model.access import Action, Principal
from engram.model.lifecycle import DecayDecision, DecayReport, LifecyclePolicy, ReceiptPruneReport
from engram.model.validation import parse
from engram.service.core import Core
from engram.store import decay as store
from engram.store import memories as q
from engram.store import retention, schedule

BATCH = 2000
RECEIPT_BATCH = 5000  # receipts deleted per transaction
KEPT_DECISIONS = 1000
_LOWEST = uuid.UUID(int=0)


class Decay(Core):
    async def lifecycle_policy(
        self, *, tenant: str | None = None, principal: Principal | None = None
    ) -> LifecyclePolicy:
        """The tenant's decay rules (any role may read them)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        async with self.db.tenant(who.tenant_id) as conn:
            stored = await store.policy(conn, who.tenant_id)
        return LifecyclePolicy.model_validate(stored or {})

    async def set_lifecycle_policy(
        self, policy: LifecyclePolicy | Mapping[str, Any], *, tenant: str | None = None,
        principal: Principal | None = None,
    ) -> LifecyclePolicy:  # fmt: skip
        """Replace the tenant's decay rules (admin); fields left out take their defaults."""
        who = self._who(tenant, principal)
        who.require(Action.MANAGE_TENANT)
        new = parse(LifecyclePolicy, policy)
        async with self.db.tenant(who.tenant_id) as conn:
            await store.set_policy(conn, who.tenant_id, new.model_dump(mode="json"))
        return new

    async def decay(
        self, *, dry_run: bool = False, tenant: str | None = None, actor: str = "decay",
        principal: Principal | None = None,
    ) -> DecayReport:  # fmt: skip
        """One decay pass over the tenant's active memories now (admin), under its lifecycle policy."""
        who = self._who(tenant, principal, actor)
        who.require(Action.MAINTAIN)
        tenant_id = who.tenant_id
        policy = await self.lifecycle_policy(principal=who)
        now = self.clock()
        report = DecayReport(tenant_id=tenant_id, dry_run=dry_run)
        async with self.db.tenant(tenant_id) as conn:
            replaced = await store.replaced_tool_results(conn, tenant_id, now)
        after = _LOWEST
        while True:
            async with self.db.tenant(tenant_id) as conn:
                rows = await store.batch(conn, tenant_id, after, BATCH)
                if not rows:
                    break
                after = rows[-1]["id"]
                decided = self._decide(rows, replaced, policy, now, report)
                if not dry_run and decided:
                    await self._apply(conn, who, decided, now, report)
                elif dry_run:
                    report.archived += sum(d.action == "archive" for d in decided)
                    report.expired += sum(d.action == "expire" for d in decided)
        return report

    def _decide(
        self, rows: list[dict[str, Any]], replaced: set[uuid.UUID], policy: LifecyclePolicy, now: Any,
        report: DecayReport,
    ) -> list[DecayDecision]:  # fmt: skip
        out: list[DecayDecision] = []
        for row in rows:
            facts = Facts(**row, source_changed=row["id"] in replaced)
            report.scanned += 1
            verdict = decide(facts, policy, now)
            if verdict is None:
                continue
            if verdict[1] != "expired" and pinned(facts):  # its own expires_at still holds for a pinned one
                report.pinned += 1
                continue
            out.append(DecayDecision(id=facts.id, action=verdict[0], reason=verdict[1],
                                     priority=priority(facts, policy, now)))  # fmt: skip
        if len(report.decisions) < KEPT_DECISIONS:
            report.decisions += out[: KEPT_DECISIONS - len(report.decisions)]
        return out

    async def _apply(
        self, conn: Any, who: Principal, decided: list[DecayDecision], now: Any, report: DecayReport
    ) -> None:
        why = {d.id: d for d in decided}
        archived = await store.archive(conn, who.tenant_id, [d.id for d in decided if d.action == "archive"])
        expired = await store.expire(conn, who.tenant_id, [d.id for d in decided if d.action == "expire"], now)
        journal = q.Journal()
        for mid in archived:
            details = {"previous_status": "active", "reason": why[mid].reason, "priority": why[mid].priority}
            journal.record(mid, "archived", "memory.archived", details)
        for mid in expired:
            journal.record(mid, "updated", "memory.expired", {"reason": why[mid].reason, "at": now.isoformat()})
        await journal.flush(conn, who.tenant_id, who.actor)
        report.archived += len(archived)
        report.expired += len(expired)

    async def prune_receipts(
        self, *, dry_run: bool = False, tenant: str | None = None, actor: str = "retention",
        principal: Principal | None = None,
    ) -> ReceiptPruneReport:  # fmt: skip
        """Delete the tenant's recall receipts older than its policy's ``receipt_days`` (admin); with
        ``dry_run``, count them. Receipts are the answer to "why did the agent use this" (SPEC 5.6), about
        7 kB each, one per recall: kept for ever they outgrow the memories they explain."""
        who = self._who(tenant, principal, actor)
        who.require(Action.MAINTAIN)
        days = (await self.lifecycle_policy(principal=who)).receipt_days
        report = ReceiptPruneReport(tenant_id=who.tenant_id, dry_run=dry_run, receipt_days=days, before=None)
        if days is None:
            return report
        report.before = before = self.clock() - timedelta(days=days)
        if dry_run:
            async with self.db.tenant(who.tenant_id) as conn:
                report.deleted = await retention.count_old(conn, who.tenant_id, before)
            return report
        while True:
            async with self.db.tenant(who.tenant_id) as conn:
                deleted = await retention.delete_old(conn, who.tenant_id, before, RECEIPT_BATCH)
            report.deleted += deleted
            if deleted < RECEIPT_BATCH:
                return report

    async def scheduled_runs(
        self, *, tenant: str | None = None, principal: Principal | None = None
    ) -> list[dict[str, Any]]:
        """When each periodic job of the tenant last ran, what came of it, and when it runs next (admin)."""
        who = self._who(tenant, principal)
        who.require(Action.MAINTAIN)
        async with self.db.tenant(who.tenant_id) as conn:
            return await schedule.runs(conn, who.tenant_id)


async def decay_tenant(engram: Decay, tenant_id: str) -> dict[str, Any]:
    """The scheduled job: one pass, unless the tenant turned decay off."""
    if not (await engram.lifecycle_policy(tenant=tenant_id)).enabled:
        return {"skipped": "disabled"}
    report = await engram.decay(tenant=tenant_id)
    return {"scanned": report.scanned, "archived": report.archived, "expired": report.expired, "pinned": report.pinned}


async def prune_receipts_tenant(engram: Decay, tenant_id: str) -> dict[str, Any]:
    """The scheduled job: the receipts older than the tenant's policy keeps, deleted."""
    report = await engram.prune_receipts(tenant=tenant_id)
    return {"deleted": report.deleted, "receipt_days": report.receipt_days}
