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
