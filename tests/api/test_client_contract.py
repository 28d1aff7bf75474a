"""The REST contract, through `engram.client`: the async client against the app on the real embedded
PostgreSQL, and the blocking client against a real `engram serve` process. Results are the library's
models, errors the library's exceptions."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from engram import Engram
from engram import errors as e
from engram.api import create_app
from engram.client import AsyncClient
from engram.model import Memory
from engram.model.recall import RecallResult

MakeClient = Callable[..., Awaitable[AsyncClient]]


@pytest.fixture
async def make(engram: Engram) -> AsyncIterator[MakeClient]:
    app = create_app(engram, run_worker=False)
    made: list[AsyncClient] = []

    async def client(tenant: str = "acme", role: str = "agent", **binding: str) -> AsyncClient:
        key = (await engram.create_key({"role": role, "name": "client", **binding}, tenant=tenant)).key
        c = AsyncClient("http://engram.test", key, transport=httpx.ASGITransport(app=app))
        made.append(c)
        return c

    yield client
    for c in made:
        await c.aclose()


async def test_write_read_update_and_history(make: MakeClient) -> None:
    agent = await make(user_id="u1")  # bound: acts as u1, who sees u1's memories
    wrote = await agent.remember("Invoices go out in USD", kind="semantic", fact_key="invoice.currency",
                                 confidence=0.9, user_id="u1", tags=["billing"])  # fmt: skip
    assert wrote.status == "active" and wrote.revision == 1 and not wrote.replayed
    mem = await agent.get(wrote.id)
    assert isinstance(mem, Memory) and mem.tags == ["billing"] and mem.user_id == "u1"
    changed = await agent.update(wrote.id, {"importance": 0.9}, revision=1)
    assert changed.revision == 2 and changed.importance == 0.9
    with pytest.raises(e.RevisionConflict) as stale:
        await agent.update(wrote.id, {"importance": 0.1}, revision=1)
    assert stale.value.current_revision == 2 and stale.value.status == 409  # type: ignore[attr-defined]
    assert [h.revision for h in await agent.history(wrote.id)] == [1, 2]
    corrected = await agent.remember("Invoices go out in EUR", kind="semantic", fact_key="invoice.currency",
                                     confidence=0.9, user_id="u1")  # fmt: skip
    assert corrected.supersedes == [wrote.id]
    page = await agent.list(fact_key="invoice.currency", status="active")
    assert [m.content for m in page.items] == ["Invoices go out in EUR"]


async def test_idempotent_writes_replay_and_conflict(make: MakeClient) -> None:
    agent = await make()
    first = await agent.remember("Deploys happen on Tuesdays", external_id="ops-1")
    again = await agent.remember("Deploys happen on Tuesdays", external_id="ops-1")
    assert again.replayed and again.id == first.id
    with pytest.raises(e.IdempotencyConflict) as clash:
        await agent.remember("Deploys happen on Fridays", external_id="ops-1")
    assert clash.value.existing_id == str(first.id)
    batch = await agent.remember_many([{"content": "One", "external_id": "b1"}, {"content": "", "kind": "x"}])
    assert batch.created == 1 and batch.failed == 1 and batch.results[1].error is not None


async def test_recall_packet_receipt_and_relations(make: MakeClient) -> None:
    agent = await make(user_id="u7")
    a = await agent.remember("Error 504 from the billing gateway means the invoice service timed out")
    b = await agent.remember("Restart the invoice service with the runbook step 3")
    relation = await agent.relate({"src_id": str(a.id), "dst_id": str(b.id), "type": "related_to"})
    assert relation.src_id == a.id
    result = await agent.recall("what does error 504 mean", max_items=3)
    assert isinstance(result, RecallResult) and result.items[0].id == a.id
    assert "504" in result.packet and result.receipt_id is not None
    receipt = await agent.receipt(result.receipt_id)
    assert receipt.id == result.receipt_id and str(a.id) in receipt.model_dump_json()
    used = await agent.memory_receipts(a.id)
    assert result.receipt_id in [r.id for r in used]


async def test_roles_and_deletion(make: MakeClient) -> None:
    agent = await make()
    reviewer = await make(role="reviewer")
    admin = await make(role="admin")
    wrote = await agent.remember("The customer's deploy window is 14:00 UTC")
    with pytest.raises(e.PermissionDenied) as refused:
        await agent.delete(wrote.id)
    assert refused.value.required_role == "reviewer"
    archived = await agent.archive(wrote.id)
    assert archived.status == "archived"
    back = await reviewer.unarchive(wrote.id)
    assert back.status == "active"
    certificate = await reviewer.delete(wrote.id)
    assert str(wrote.id) in certificate.model_dump_json()
    with pytest.raises(e.NotFoundError):
        await agent.get(wrote.id)
    await agent.remember("Another note about u2", user_id="u2")
    forgot = await admin.forget_subject("u2")
    assert forgot.tenant_id == "acme"
    key = await admin.create_key("agent", name="temp")
    assert key.key.startswith("egm_") and any(k.id == key.id for k in await admin.keys())
    assert (await admin.revoke_key(key.id)).revoked_at is not None


async def test_validation_errors_name_the_field_and_other_tenants_are_invisible(make: MakeClient) -> None:
    acme, globex = await make(), await make(tenant="globex")
    with pytest.raises(e.ValidationError) as bad:
        await acme.remember("ok", kind="feelings")
    assert bad.value.field == "kind" and bad.value.status == 422  # type: ignore[attr-defined]
    theirs = await globex.remember("Globex's secret roadmap")
    with pytest.raises(e.NotFoundError):
        await acme.get(theirs.id)
    with pytest.raises(e.NotFoundError):
        await acme.get(uuid.uuid4())
    with pytest.raises(e.AuthenticationError):
        await AsyncClient("http://engram.test", "egm_" + "x" * 43, transport=acme._http._transport).get(theirs.id)


async def test_approvals_through_the_client(make: MakeClient) -> None:
    admin = await make(role="admin")
    policy = await admin.update_policy({"approval_importance": 0.8})
    assert policy.approval == "high_impact" and policy.approval_importance == 0.8
    agent = await make()
    held = await agent.remember("Refunds above 500 EUR need the finance lead", importance=0.85)
    assert held.status == "pending_approval"
    queue = await admin.approvals()
    assert [m.id for m in queue.items] == [held.id]
    approved = await admin.approve(held.id)
    assert approved.status == "active"
