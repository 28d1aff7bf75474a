"""The approval queue as service operations (reviewers and admins): what admission held or quarantined,
and the decision on each. Approving a memory of a fact makes it the fact's memory (the active one is
superseded); rejecting keeps the memory, with status ``rejected``, out of every recall."""

from __future__ import annotations

import uuid
from typing import Literal

from engram.errors import ConflictError, ValidationError
from engram.model import Memory, MemoryPage
from engram.model.access import Action, Principal
from engram.service.changes import locked
from engram.service.core import Core, _uuid
from engram.store import approvals, chains
from engram.store import memories as q

Queue = Literal["pending_approval", "quarantined"]


async def _decide(engram: Core, who: Principal, mid: uuid.UUID, approve: bool, expected: int | None) -> Memory:
    who.require(Action.APPROVE)
    tenant_id = who.tenant_id
    journal = q.Journal()
    async with engram.db.tenant(tenant_id) as conn:
        current = await locked(conn, who, who.acting(), tenant_id, mid, expected)
        if current.status not in approvals.AWAITING:
            raise ConflictError(
                f"memory {mid} is {current.status}: only memories pending approval or quarantined await a decision"
            )
        if not approve:
            mem = await approvals.set_status(conn, tenant_id, mid, "rejected")
            journal.record(mid, "rejected", "memory.rejected", {"previous_status": current.status})
        else:
            superseded = None
            if current.fact_key is not None:  # the fact's lock is held (``locked``)
                superseded = await chains.active_fact(conn, tenant_id, q.scope_key(current), current.fact_key, mid)
            if superseded is not None:
                clock = await (await conn.execute(q.CLOCK)).fetchone()
                assert clock is not None
                params = {"new_id": mid, "valid_from": clock["ts"], "tenant_id": tenant_id, "old_id": superseded}
                await conn.execute(q.SUPERSEDE, params)
                journal.record(superseded, "superseded", "memory.superseded", {"superseded_by": str(mid)})
            mem = await approvals.set_status(conn, tenant_id, mid, "active")
            details: dict[str, str] = {"previous_status": current.status}
            if superseded is not None:
                details["supersedes"] = str(superseded)
            journal.record(mid, "approved", "memory.approved", details)
        await journal.flush(conn, tenant_id, who.actor)
    return mem


class Approvals(Core):
    """The approval queue, as operations of Engram (reviewer or admin)."""

    async def approvals(
        self,
        *,
        status: Queue | None = None,
        limit: int = 50,
        cursor: str | None = None,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> MemoryPage:
        """Memories awaiting a reviewer, oldest first: held for approval, quarantined, or both (``status``
        None). Each carries its ``admission`` reasons."""
        who = self._who(tenant, principal)
        who.require(Action.APPROVE)
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        if status is not None and status not in approvals.AWAITING:
            raise ValidationError(f"status must be one of {', '.join(approvals.AWAITING)}", field="status")
        statuses = (status,) if status else approvals.AWAITING
        acting = None if who.sees_all else who.acting()
        async with self.db.tenant(who.tenant_id) as conn:
            items, next_cursor = await approvals.review_page(
                conn, who.tenant_id, statuses=statuses, limit=limit, cursor=cursor, acting=acting
            )
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def approve(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> Memory:
        """Admit a held or quarantined memory: it becomes active (and its fact's memory)."""
        who = self._who(tenant, principal, actor)
        return await _decide(self, who, _uuid(memory_id), True, expected_revision)

    async def reject(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> Memory:
        """Refuse a held or quarantined memory: it stays, with status rejected, out of every recall."""
        who = self._who(tenant, principal, actor)
        return await _decide(self, who, _uuid(memory_id), False, expected_revision)
