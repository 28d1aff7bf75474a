"""Workflow state (SPEC 6.1): read and write a workflow's working memory by revision; ending a workflow
expires its working memories."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram.errors import NotFoundError, PreconditionRequired, RevisionConflict, ValidationError
from engram.model.access import Action, Principal
from engram.model.ids import check_scope_id
from engram.model.validation import parse
from engram.model.workflow import WorkflowState, WorkflowStateInput, check_size, stored_state, view
from engram.service.core import Core
from engram.store import memories as q
from engram.store import workflows as store


class Workflows(Core):
    async def workflow_state(
        self,
        workflow_id: str,
        *,
        revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> WorkflowState:
        """The workflow's current state (or the one at ``revision``). NotFoundError when there is none."""
        who = self._who(tenant, principal, actor)
        who.require(Action.READ)
        workflow_id = check_scope_id(workflow_id, "workflow_id")
        async with self.db.tenant(who.tenant_id) as conn:
            row = await store.get(conn, who.tenant_id, workflow_id, revision)
        if row is None or not _reachable(who, row):
            what = f"revision {revision} of workflow {workflow_id!r}" if revision else f"workflow {workflow_id!r}"
            raise NotFoundError(f"{what} has no stored state in this tenant: PUT one first", field="workflow_id")
        return view(row, self.clock())

    async def put_workflow_state(
        self,
        workflow_id: str,
        state: WorkflowStateInput | Mapping[str, Any],
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> WorkflowState:
        """Store the workflow's whole state. The first write needs no ``expected_revision``; every later one
        names the revision it read (RevisionConflict when another writer came first, PreconditionRequired
        without it). ``status="ended"`` ends the workflow: its working memories expire, its state stays
        readable and can no longer change."""
        who = self._who(tenant, principal, actor)
        who.require(Action.WRITE)
        workflow_id = check_scope_id(workflow_id, "workflow_id")
        given = parse(WorkflowStateInput, state)
        user_id = who.bound(given.user_id, "user_id")
        agent_id = who.bound(given.agent_id, "agent_id")
        at = self.clock()
        body = stored_state(given, at)
        try:
            check_size(body)
        except ValueError as exc:
            raise ValidationError(f"the state {exc}", field="state") from None
        async with self.db.tenant(who.tenant_id) as conn:
            row = await store.put(
                conn, who.tenant_id, workflow_id, expected=expected_revision, status=given.status, state=body,
                user_id=user_id, agent_id=agent_id, at=at, actor=who.actor,
            )  # fmt: skip
            if row is None:
                current = await store.get(conn, who.tenant_id, workflow_id)
                _refuse(who, workflow_id, expected_revision, current)
            assert row is not None
            if not _reachable(who, row):  # a bound key cannot write another user's workflow
                raise NotFoundError(f"workflow {workflow_id!r} does not exist in this tenant", field="workflow_id")
            expired = []
            if given.status == "ended":
                expired = await store.expire_working(conn, who.tenant_id, workflow_id, at)
                journal = q.Journal()
                for mid in expired:
                    journal.record(mid, "updated", "memory.expired", {"workflow_id": workflow_id, "reason": "ended"})
                await journal.flush(conn, who.tenant_id, who.actor)
        return view(row, at, len(expired))


def _reachable(who: Principal, row: Mapping[str, Any]) -> bool:
    """A key bound to a user or agent reaches only the workflows of that user or agent (or of nobody)."""
    if who.user_id is not None and row["user_id"] not in (None, who.user_id):
        return False
    return who.agent_id is None or row["agent_id"] in (None, who.agent_id)


def _refuse(who: Principal, workflow_id: str, expected: int | None, current: Mapping[str, Any] | None) -> None:
    if current is None or not _reachable(who, current):
        raise NotFoundError(
            f"workflow {workflow_id!r} has no stored state to replace: send the first PUT without If-Match",
            field="workflow_id",
        )
    if current["status"] == "ended":
        raise RevisionConflict(
            f"workflow {workflow_id!r} ended at {current['ended_at'].isoformat()}; its state (revision "
            f"{current['revision']}) is kept and can no longer change",
            current_revision=current["revision"],
        )
    if expected is None:
        raise PreconditionRequired(
            f"workflow {workflow_id!r} already has state (revision {current['revision']}): send If-Match with the "
            "revision you read",
            field="If-Match",
        )
    raise RevisionConflict(
        f"workflow {workflow_id!r} is at revision {current['revision']}, not {expected}: read it again, re-apply "
        "your change and retry",
        current_revision=current["revision"],
    )
