"""Every REST operation, once: its arguments, the request they make and the model its answer becomes. The
sync and async clients expose these same functions as methods (``_clients.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from engram.client._http import Call, if_match, query

if TYPE_CHECKING:
    from engram.model import HistoryEntry, Memory, MemoryPage
    from engram.model.access import ApiKey, NewKey
    from engram.model.action import Action, ActionPage, ActionResult
    from engram.model.admission import AdmissionPolicy
    from engram.model.consolidation import ConsolidationReport
    from engram.model.conversation import BufferedTurn, TurnAck
    from engram.model.forget import DeletionCertificate
    from engram.model.lifecycle import DecayReport, LifecyclePolicy, ReceiptPruneReport
    from engram.model.procedure import Procedure
    from engram.model.recall import RecallResult, Receipt, Relation
    from engram.model.tenant import TenantSettings
    from engram.model.wire import (
        BatchResponse,
        ExtractResponse,
        Health,
        RescanReport,
        ScheduledRun,
        VaultRotation,
        WriteResponse,
    )
    from engram.model.workflow import WorkflowState

Id = uuid.UUID | str
Body = Mapping[str, Any]

# Operation -> the route it calls (checked against the app's routes by tests/unit/test_client.py).
ROUTES: dict[str, str] = {}


F = TypeVar("F", bound=Callable[..., Any])


def route(spec: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        ROUTES[fn.__name__] = spec
        return fn

    return mark


def _model(body: Any) -> Any:
    """A pydantic model (or a mapping) as JSON-ready data."""
    dump = getattr(body, "model_dump", None)
    return dump(mode="json", exclude_unset=True) if callable(dump) else dict(body)


def _acting(user_id: str | None, agent_id: str | None, workflow_id: str | None) -> dict[str, Any]:
    return query(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)


# --- memories ------------------------------------------------------------------------------------------------


@route("POST /v1/memories")
def remember(content: str | Body, *, embed: str | None = None, **fields: Any) -> Call[WriteResponse]:
    """Write one memory: ``content`` and any field of ``POST /v1/memories`` (kind, fact_key, user_id, tags,
    external_id ...). With an ``external_id`` the write is safe to resend: the same one is a replay."""
    body = {"content": content, **fields} if isinstance(content, str) else {**_model(content), **fields}
    return Call(
        "POST",
        "/v1/memories",
        "engram.model.wire:WriteResponse",
        query(embed=embed),
        body,
        safe=bool(body.get("external_id")),
    )


@route("POST /v1/memories:batch")
def remember_many(items: Sequence[Body], *, embed: str | None = None) -> Call[BatchResponse]:
    """Write up to 1,000 memories; each succeeds or fails on its own (``results[i]``)."""
    body = {"items": [_model(item) for item in items]}
    safe = all(item.get("external_id") for item in body["items"])
    return Call("POST", "/v1/memories:batch", "engram.model.wire:BatchResponse", query(embed=embed), body, safe=safe)


@route("GET /v1/memories/{memory_id}")
def get(
    memory_id: Id,
    *,
    reveal: bool | None = None,
    user_id: str | None = None,
    agent_id: str | None = None,
    workflow_id: str | None = None,
) -> Call[Memory]:
    """One memory (personal data as placeholders unless ``reveal`` and the key may)."""
    params = {**query(reveal=reveal), **_acting(user_id, agent_id, workflow_id)}
    return Call("GET", f"/v1/memories/{memory_id}", "engram.model:Memory", params)


@route("GET /v1/memories")
def list_memories(
    *,
    limit: int | None = None,
    cursor: str | None = None,
    tags: Sequence[str] = (),
    reveal: bool | None = None,
    kind: str | None = None,
    status: str | None = None,
    user_id: str | None = None,
    agent_id: str | None = None,
    workflow_id: str | None = None,
    session_id: str | None = None,
    fact_key: str | None = None,
    external_id: str | None = None,
    contains: str | None = None,
) -> Call[MemoryPage]:
    """A page of memories, newest first, filtered (all filters must match); pass ``next_cursor`` back."""
    params = query(
        limit=limit, cursor=cursor, tag=[*tags], reveal=reveal, kind=kind, status=status, user_id=user_id,
        agent_id=agent_id, workflow_id=workflow_id, session_id=session_id, fact_key=fact_key, external_id=external_id,
        contains=contains,
    )  # fmt: skip
    return Call("GET", "/v1/memories", "engram.model:MemoryPage", params)


@route("PATCH /v1/memories/{memory_id}")
def update(
    memory_id: Id,
    patch: Body,
    *,
    revision: int,
    user_id: str | None = None,
    agent_id: str | None = None,
    workflow_id: str | None = None,
) -> Call[Memory]:
    """Change fields of the memory at ``revision`` (sent as If-Match): RevisionConflict if it moved on."""
    path = f"/v1/memories/{memory_id}"
    return Call(
        "PATCH", path, "engram.model:Memory", _acting(user_id, agent_id, workflow_id), _model(patch), if_match(revision)
    )


@route("POST /v1/memories/{memory_id}/archive")
def archive(memory_id: Id, *, revision: int | None = None, user_id: str | None = None,
            agent_id: str | None = None, workflow_id: str | None = None) -> Call[Memory]:  # fmt: skip
    """Take a memory out of service; it and its history stay."""
    params = _acting(user_id, agent_id, workflow_id)
    return Call("POST", f"/v1/memories/{memory_id}/archive", "engram.model:Memory", params, None, if_match(revision))


@route("POST /v1/memories/{memory_id}/unarchive")
def unarchive(memory_id: Id, *, revision: int | None = None) -> Call[Memory]:
    """Put an archived memory back in service (reviewer)."""
    return Call("POST", f"/v1/memories/{memory_id}/unarchive", "engram.model:Memory", {}, None, if_match(revision))


@route("DELETE /v1/memories/{memory_id}")
def delete(memory_id: Id, *, revision: int | None = None) -> Call[DeletionCertificate]:
    """Delete a memory and what was derived from it; the certificate lists what went (reviewer)."""
    return Call(
        "DELETE", f"/v1/memories/{memory_id}", "engram.model.forget:DeletionCertificate", {}, None, if_match(revision)
    )


@route("GET /v1/memories/{memory_id}/history")
def history(memory_id: Id, *, user_id: str | None = None, agent_id: str | None = None,
            workflow_id: str | None = None) -> Call[list[HistoryEntry]]:  # fmt: skip
    """Every revision of a memory, oldest first."""
    params = _acting(user_id, agent_id, workflow_id)
    return Call("GET", f"/v1/memories/{memory_id}/history", "list:engram.model:HistoryEntry", params)


@route("GET /v1/memories/{memory_id}/receipts")
def memory_receipts(memory_id: Id, *, limit: int | None = None, user_id: str | None = None,
                    agent_id: str | None = None, workflow_id: str | None = None) -> Call[list[Receipt]]:  # fmt: skip
    """The recalls that used this memory, newest first: why it was used."""
    params = {**query(limit=limit), **_acting(user_id, agent_id, workflow_id)}
    return Call("GET", f"/v1/memories/{memory_id}/receipts", "list:engram.model.recall:Receipt", params)


@route("POST /v1/memories:extract")
def extract(request: Body, *, embed: str | None = None) -> Call[ExtractResponse]:
    """Turn a conversation turn or a tool output into candidate memories and write them (or preview them)."""
    body = _model(request)
    return Call(
        "POST", "/v1/memories:extract", ExtractResponse, query(embed=embed), body, safe=bool(body.get("dry_run"))
    )


# --- recall, receipts, relations -------------------------------------------------------------------------------


@route("POST /v1/recall")
def recall(query_or_request: str | Body, **fields: Any) -> Call[RecallResult]:
    """Recall for a query: items, the prompt packet and the receipt's id. ``fields``: user_id, kinds, tags,
    max_items, max_tokens, preset, as_of ..."""
    body = {"query": query_or_request, **fields} if isinstance(query_or_request, str) else _model(query_or_request)
    return Call("POST", "/v1/recall", "engram.model.recall:RecallResult", {}, body)


@route("GET /v1/receipts/{receipt_id}")
def receipt(receipt_id: Id, *, user_id: str | None = None) -> Call[Receipt]:
    """What a recall looked at, chose and why."""
    return Call("GET", f"/v1/receipts/{receipt_id}", "engram.model.recall:Receipt", query(user_id=user_id))


@route("POST /v1/relations")
def relate(relation: Body, *, user_id: str | None = None, agent_id: str | None = None,
           workflow_id: str | None = None) -> Call[Relation]:  # fmt: skip
    """A typed, weighted edge between two memories (idempotent per source, target and type)."""
    return Call(
        "POST",
        "/v1/relations",
        "engram.model.recall:Relation",
        _acting(user_id, agent_id, workflow_id),
        _model(relation),
    )


# --- subjects, sessions, workflows, actions, procedures ------------------------------------------------------


@route("POST /v1/subjects/{user_id}:forget")
def forget_subject(user_id: str) -> Call[DeletionCertificate]:
    """Remove everything the tenant holds of a user (admin)."""
    return Call("POST", f"/v1/subjects/{user_id}:forget", "engram.model.forget:DeletionCertificate")


@route("POST /v1/sessions/{session_id}/turns")
def add_turn(session_id: str, content: str, *, user_id: str | None = None, agent_id: str | None = None,
             speaker: str | None = None) -> Call[TurnAck]:  # fmt: skip
    """Append a turn to a session's buffer (condensed into memories as it fills). Not resent on a lost
    connection: the turn might be buffered twice."""
    body = {k: v for k, v in {"content": content, "user_id": user_id, "agent_id": agent_id,
                              "speaker": speaker}.items() if v is not None}  # fmt: skip
    return Call("POST", f"/v1/sessions/{session_id}/turns", "engram.model.conversation:TurnAck", {}, body, safe=False)


@route("GET /v1/sessions/{session_id}/turns")
def turns(session_id: str) -> Call[list[BufferedTurn]]:
    """The turns a session's buffer holds now."""
    return Call("GET", f"/v1/sessions/{session_id}/turns", "list:engram.model.conversation:BufferedTurn")


@route("GET /v1/workflows/{workflow_id}/state")
def workflow_state(workflow_id: str, *, revision: int | None = None) -> Call[WorkflowState]:
    """A workflow's state (its latest revision, or ``revision``)."""
    return Call(
        "GET", f"/v1/workflows/{workflow_id}/state", "engram.model.workflow:WorkflowState", query(revision=revision)
    )


@route("PUT /v1/workflows/{workflow_id}/state")
def put_workflow_state(workflow_id: str, state: Body, *, revision: int | None = None) -> Call[WorkflowState]:
    """Replace a workflow's state; ``revision`` (If-Match) guards against a concurrent change."""
    path = f"/v1/workflows/{workflow_id}/state"
    return Call("PUT", path, "engram.model.workflow:WorkflowState", {}, _model(state), if_match(revision))


@route("POST /v1/actions")
def act(action: Body, *, embed: str | None = None) -> Call[ActionResult]:
    """A memory and an outbox action in one transaction; ``idempotency_key`` makes it safe to resend."""
    body = _model(action)
    return Call(
        "POST",
        "/v1/actions",
        "engram.model.action:ActionResult",
        query(embed=embed),
        body,
        safe=bool(body.get("idempotency_key")),
    )


@route("GET /v1/actions")
def actions(*, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> Call[ActionPage]:
    """A page of the tenant's outbox actions, newest first."""
    return Call(
        "GET", "/v1/actions", "engram.model.action:ActionPage", query(status=status, limit=limit, cursor=cursor)
    )


@route("GET /v1/actions/{action_id}")
def action(action_id: Id) -> Call[Action]:
    """One outbox action: its attempts, result or last error."""
    return Call("GET", f"/v1/actions/{action_id}", "engram.model.action:Action")


@route("POST /v1/actions/{action_id}/retry")
def retry_action(action_id: Id) -> Call[Action]:
    """Send a dead action again."""
    return Call("POST", f"/v1/actions/{action_id}/retry", "engram.model.action:Action")


@route("PUT /v1/procedures/{name}")
def put_procedure(name: str, procedure: Body) -> Call[Procedure]:
    """Store a new version of a named procedure (steps, description)."""
    return Call("PUT", f"/v1/procedures/{name}", "engram.model.procedure:Procedure", {}, _model(procedure))


@route("GET /v1/procedures/{name}")
def procedure(name: str, *, version: int | None = None) -> Call[Procedure]:
    """A procedure's current version, or ``version``."""
    return Call("GET", f"/v1/procedures/{name}", "engram.model.procedure:Procedure", query(version=version))


@route("GET /v1/procedures/{name}/versions")
def procedure_versions(name: str) -> Call[list[Procedure]]:
    """Every version of a procedure, oldest first."""
    return Call("GET", f"/v1/procedures/{name}/versions", "list:engram.model.procedure:Procedure")


# --- approvals -----------------------------------------------------------------------------------------------


@route("GET /v1/approvals")
def approvals(*, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> Call[MemoryPage]:
    """Memories waiting for a reviewer (pending, or quarantined with ``status``)."""
    return Call("GET", "/v1/approvals", "engram.model:MemoryPage", query(status=status, limit=limit, cursor=cursor))


@route("POST /v1/approvals/{memory_id}:approve")
def approve(memory_id: Id, *, revision: int | None = None) -> Call[Memory]:
    """Admit a pending or quarantined memory (reviewer)."""
    return Call("POST", f"/v1/approvals/{memory_id}:approve", "engram.model:Memory", {}, None, if_match(revision))


@route("POST /v1/approvals/{memory_id}:reject")
def reject(memory_id: Id, *, revision: int | None = None) -> Call[Memory]:
    """Refuse a pending or quarantined memory (reviewer)."""
    return Call("POST", f"/v1/approvals/{memory_id}:reject", "engram.model:Memory", {}, None, if_match(revision))


# --- administration ------------------------------------------------------------------------------------------


@route("GET /healthz")
def health() -> Call[Health]:
    """Whether the server and its database answer."""
    return Call("GET", "/healthz", "engram.model.wire:Health")


@route("GET /metrics")
def metrics() -> Call[str]:
    """Prometheus metrics, as text."""
    return Call("GET", "/metrics", str)


@route("POST /v1/keys")
def create_key(role: str = "agent", *, name: str = "", user_id: str | None = None, agent_id: str | None = None,
               can_reveal: bool = False) -> Call[NewKey]:  # fmt: skip
    """A new API key of this tenant (admin); its secret is in ``key``, shown this once."""
    body = {"role": role, "name": name, "user_id": user_id, "agent_id": agent_id, "can_reveal": can_reveal}
    return Call(
        "POST",
        "/v1/keys",
        "engram.model.access:NewKey",
        {},
        {k: v for k, v in body.items() if v is not None},
        safe=False,
    )


@route("GET /v1/keys")
def keys() -> Call[list[ApiKey]]:
    """The tenant's keys, never their secrets (admin)."""
    return Call("GET", "/v1/keys", "list:engram.model.access:ApiKey")


@route("DELETE /v1/keys/{key_id}")
def revoke_key(key_id: Id) -> Call[ApiKey]:
    """Revoke a key (admin)."""
    return Call("DELETE", f"/v1/keys/{key_id}", "engram.model.access:ApiKey")


@route("GET /v1/tenant")
def tenant() -> Call[TenantSettings]:
    """The tenant's settings."""
    return Call("GET", "/v1/tenant", "engram.model.tenant:TenantSettings")


@route("PATCH /v1/tenant")
def update_tenant(patch: Body) -> Call[TenantSettings]:
    """Change the tenant's settings (admin)."""
    return Call("PATCH", "/v1/tenant", "engram.model.tenant:TenantSettings", {}, _model(patch))


@route("GET /v1/policy")
def policy() -> Call[AdmissionPolicy]:
    """The tenant's admission policy."""
    return Call("GET", "/v1/policy", "engram.model.admission:AdmissionPolicy")


@route("PATCH /v1/policy")
def update_policy(patch: Body) -> Call[AdmissionPolicy]:
    """Change the admission policy (admin)."""
    return Call("PATCH", "/v1/policy", "engram.model.admission:AdmissionPolicy", {}, _model(patch))


@route("POST /v1/policy:rescan")
def rescan(*, batch: int | None = None, cursor: str | None = None) -> Call[RescanReport]:
    """Apply the current policy to stored memories, a batch at a time (admin)."""
    return Call("POST", "/v1/policy:rescan", "engram.model.wire:RescanReport", {}, query(batch=batch, cursor=cursor))


@route("POST /v1/vault:rotate")
def rotate_vault() -> Call[VaultRotation]:
    """Seal the tenant's vault values again under the current key (admin)."""
    return Call("POST", "/v1/vault:rotate", "engram.model.wire:VaultRotation")


@route("GET /v1/admin/lifecycle")
def lifecycle() -> Call[LifecyclePolicy]:
    """The tenant's decay and retention policy."""
    return Call("GET", "/v1/admin/lifecycle", "engram.model.lifecycle:LifecyclePolicy")


@route("PUT /v1/admin/lifecycle")
def put_lifecycle(policy: Body) -> Call[LifecyclePolicy]:
    """Replace the tenant's decay and retention policy (admin)."""
    return Call("PUT", "/v1/admin/lifecycle", "engram.model.lifecycle:LifecyclePolicy", {}, _model(policy))


@route("POST /v1/admin/decay")
def decay(*, dry_run: bool = False) -> Call[DecayReport]:
    """One decay pass now (admin); ``dry_run`` reports without changing anything."""
    return Call("POST", "/v1/admin/decay", "engram.model.lifecycle:DecayReport", {}, {"dry_run": dry_run})


@route("POST /v1/receipts:prune")
def prune_receipts(*, dry_run: bool = False) -> Call[ReceiptPruneReport]:
    """Delete the recall receipts older than the tenant's ``receipt_days`` now (admin); ``dry_run`` counts them."""
    return Call("POST", "/v1/receipts:prune", "engram.model.lifecycle:ReceiptPruneReport", {}, {"dry_run": dry_run})


@route("POST /v1/admin/consolidate")
def consolidate(request: Body | None = None) -> Call[ConsolidationReport]:
    """Turn repeated episodes into facts derived from them (admin; idempotent)."""
    return Call(
        "POST", "/v1/admin/consolidate", "engram.model.consolidation:ConsolidationReport", {}, _model(request or {})
    )


@route("GET /v1/admin/jobs")
def jobs() -> Call[list[ScheduledRun]]:
    """The tenant's periodic jobs: when each ran, what came of it, when it runs next."""
    return Call("GET", "/v1/admin/jobs", "list:engram.model.wire:ScheduledRun")


__all__ = [name for name in ROUTES]
