"""Lifecycle jobs over REST: who may run them and what bad input gets."""

from __future__ import annotations

from engram import Engram
from tests.api.conftest import MakeClient, error_of


async def test_consolidation_is_for_unbound_admins_and_checks_its_input(
    engram: Engram, make_client: MakeClient
) -> None:
    agent = await make_client(role="agent")
    assert (await agent.post("/v1/admin/consolidate", json={})).status_code == 403
    bound = await make_client(role="admin", user_id="u1")
    assert (await bound.post("/v1/admin/consolidate", json={})).status_code == 403
    admin = await make_client(role="admin")
    bad = await admin.post("/v1/admin/consolidate", json={"min_episodes": 1})
    assert bad.status_code == 422 and error_of(bad)["field"] == "min_episodes"
    for t in ("Prefers invoices in EUR.", "prefers invoices in EUR!", "user: Prefers invoices in EUR"):
        await engram.remember(t, kind="episodic", user_id="u1")
    ok = await admin.post("/v1/admin/consolidate", json={"dry_run": True})
    assert ok.status_code == 200 and ok.json()["groups"] == 1 and ok.json()["created"] == 0
    done = await admin.post("/v1/admin/consolidate", json={})
    assert done.json()["created"] == 1 and done.json()["facts"][0]["outcome"] == "created"


async def test_decay_and_its_policy_over_rest(engram: Engram, make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    assert (await agent.get("/v1/admin/lifecycle")).json()["archive_below"] == 0.3  # any role reads the rules
    assert (await agent.put("/v1/admin/lifecycle", json={"archive_below": 0.5})).status_code == 403
    assert (await agent.post("/v1/admin/decay", json={})).status_code == 403
    assert (await agent.get("/v1/admin/jobs")).status_code == 403
    admin = await make_client(role="admin")
    bad = await admin.put("/v1/admin/lifecycle", json={"archive_below": 2})
    assert bad.status_code == 422 and error_of(bad)["field"] == "archive_below"
    unknown = await admin.put("/v1/admin/lifecycle", json={"archive_threshold": 0.5})
    assert unknown.status_code == 422 and error_of(unknown)["field"] == "archive_threshold"
    put = await admin.put("/v1/admin/lifecycle", json={"archive_below": 0.5, "sensitive_days": None})
    assert put.status_code == 200 and put.json()["sensitive_days"] is None and put.json()["min_age_days"] == 7
    await engram.remember("The office cat is called Miso.", kind="semantic")
    report = await admin.post("/v1/admin/decay", json={"dry_run": True})
    assert report.status_code == 200 and report.json()["scanned"] == 1 and report.json()["archived"] == 0
    assert (await admin.get("/v1/admin/jobs")).json() == []  # no scheduler has run here yet


async def test_receipts_are_pruned_over_rest_by_unbound_admins(engram: Engram, make_client: MakeClient) -> None:
    await engram.remember("The warehouse ships pallets on Mondays.")
    old = (await engram.recall("when does the warehouse ship")).receipt_id
    await engram.retriever.receipts.settle()
    async with engram.db.owner() as conn:
        await conn.execute("UPDATE recall_receipts SET created_at = now() - interval '100 days' WHERE id = %s", [old])
    for role, user in (("agent", None), ("admin", "u1")):
        assert (
            await (await make_client(role=role, user_id=user)).post("/v1/receipts:prune", json={})
        ).status_code == 403
    admin = await make_client(role="admin")
    bad = await admin.post("/v1/receipts:prune", json={"dry_run": "maybe"})
    assert bad.status_code == 422 and error_of(bad)["field"] == "dry_run"
    unknown = await admin.post("/v1/receipts:prune", json={"older_than": 3})
    assert unknown.status_code == 422 and error_of(unknown)["field"] == "older_than"
    dry = await admin.post("/v1/receipts:prune", json={"dry_run": True})
    assert dry.status_code == 200 and dry.json()["deleted"] == 1 and dry.json()["receipt_days"] == 90
    assert (await admin.get(f"/v1/receipts/{old}")).status_code == 200
    done = await admin.post("/v1/receipts:prune", json={})
    assert done.status_code == 200 and done.json()["deleted"] == 1 and not done.json()["dry_run"]
    assert (await admin.get(f"/v1/receipts/{old}")).status_code == 404
    shorter = await admin.put("/v1/admin/lifecycle", json={"receipt_days": 0})
    assert shorter.status_code == 422 and error_of(shorter)["field"] == "receipt_days"
