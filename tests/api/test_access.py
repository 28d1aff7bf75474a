"""Roles, keys bound to a user or agent, and the one visibility rule, over REST on the real database
(docs/security.md). The cases the hostile review found are regression tests here."""

from __future__ import annotations

import asyncio

import httpx

from tests.api.conftest import MakeClient, error_of


async def test_an_agent_may_not_delete_unarchive_or_administer(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    mid = (await agent.post("/v1/memories", json={"content": "Quarterly report is due Friday"})).json()["id"]
    assert (await agent.post(f"/v1/memories/{mid}/archive")).status_code == 200  # agents archive
    for call in (
        agent.delete(f"/v1/memories/{mid}"),
        agent.post(f"/v1/memories/{mid}/unarchive"),
        agent.get("/v1/keys"),
        agent.post("/v1/keys", json={"role": "admin"}),
        agent.patch("/v1/tenant", json={"fts_config": "simple"}),
    ):
        r = await call
        assert r.status_code == 403, r.text
        err = error_of(r)
        assert err["code"] == "permission_denied" and err["required_role"] in ("reviewer", "admin")
    assert (await agent.get(f"/v1/memories/{mid}")).json()["status"] == "archived"


async def test_a_reviewer_deletes_and_unarchives_an_admin_manages_keys(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    reviewer = await make_client(role="reviewer")
    admin = await make_client(role="admin")
    mid = (await agent.post("/v1/memories", json={"content": "Office closes at 6pm"})).json()["id"]
    await agent.post(f"/v1/memories/{mid}/archive")
    back = await reviewer.post(f"/v1/memories/{mid}/unarchive")
    assert back.status_code == 200 and back.json()["status"] == "active" and back.json()["revision"] == 3
    history = (await reviewer.get(f"/v1/memories/{mid}/history")).json()
    assert [h["change"] for h in history] == ["created", "archived", "restored"]
    assert (await reviewer.get("/v1/keys")).status_code == 403
    made = await admin.post("/v1/keys", json={"role": "agent", "name": "bot", "user_id": "u7"})
    assert made.status_code == 201 and made.json()["key"].startswith("egm_") and made.json()["user_id"] == "u7"
    listed = (await admin.get("/v1/keys")).json()
    assert made.json()["id"] in [k["id"] for k in listed] and all("key" not in k for k in listed)
    new = httpx.AsyncClient(
        transport=agent._transport, base_url="http://engram.test",
        headers={"Authorization": f"Bearer {made.json()['key']}"},
    )  # fmt: skip
    async with new:
        assert (await new.get("/v1/memories")).status_code == 200
        revoked = await admin.delete(f"/v1/keys/{made.json()['id']}")
        assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
        assert (await new.get("/v1/memories")).status_code == 401  # at once on this server
    assert (await admin.delete(f"/v1/keys/{made.json()['id']}")).status_code == 404
    assert (await reviewer.delete(f"/v1/memories/{mid}")).status_code == 200


async def test_an_agent_reads_a_users_memory_only_acting_as_that_user(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    private = (await agent.post("/v1/memories", json={"content": "u1 private note", "user_id": "u1"})).json()["id"]
    shared = (
        await agent.post("/v1/memories", json={"content": "team note", "user_id": "u1", "visibility": "tenant"})
    ).json()["id"]
    assert (await agent.get(f"/v1/memories/{private}")).status_code == 404
    assert (await agent.get(f"/v1/memories/{private}", params={"user_id": "u2"})).status_code == 404
    assert (await agent.get(f"/v1/memories/{private}", params={"user_id": "u1"})).status_code == 200
    assert (await agent.get(f"/v1/memories/{shared}")).status_code == 200
    assert (await agent.get(f"/v1/memories/{private}/history")).status_code == 404
    assert (await agent.get(f"/v1/memories/{private}/receipts")).status_code == 404
    listed = (await agent.get("/v1/memories")).json()["items"]
    assert [m["id"] for m in listed] == [shared]
    as_u1 = (await agent.get("/v1/memories", params={"user_id": "u1"})).json()["items"]
    assert {m["id"] for m in as_u1} == {private, shared}
    # Changing it takes acting as its user too; widening its visibility takes a reviewer.
    hidden = await agent.post(f"/v1/memories/{private}/archive")
    assert hidden.status_code == 404
    widen = await agent.patch(
        f"/v1/memories/{private}", params={"user_id": "u1"}, json={"visibility": "tenant"}, headers={"If-Match": "1"}
    )
    assert widen.status_code == 403 and error_of(widen)["required_role"] == "reviewer"
    reviewer = await make_client(role="reviewer")
    assert (await reviewer.get(f"/v1/memories/{private}")).status_code == 200
    assert len((await reviewer.get("/v1/memories")).json()["items"]) == 2
    widened = await reviewer.patch(f"/v1/memories/{private}", json={"visibility": "tenant"}, headers={"If-Match": "1"})
    assert widened.status_code == 200 and widened.json()["visibility"] == "tenant"


async def test_a_key_bound_to_a_user_acts_only_as_that_user(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    await agent.post("/v1/memories", json={"content": "u2 keeps a cat named Miso", "user_id": "u2"})
    u1 = await make_client(role="agent", user_id="u1")
    written = await u1.post("/v1/memories", json={"content": "u1 prefers email over phone"})
    assert written.status_code == 201
    mine = (await u1.get(f"/v1/memories/{written.json()['id']}")).json()
    assert mine["user_id"] == "u1"  # filled in from the key
    other = await u1.post("/v1/memories", json={"content": "pretending to be u2", "user_id": "u2"})
    assert other.status_code == 403 and error_of(other)["field"] == "user_id"
    batch = await u1.post(
        "/v1/memories:batch", json={"items": [{"content": "u1 likes hiking"}, {"content": "not mine", "user_id": "u2"}]}
    )
    results = batch.json()["results"]
    assert results[0]["ok"] and not results[1]["ok"]
    assert results[1]["error"]["code"] == "permission_denied" and results[1]["error"]["field"] == "items[1].user_id"
    assert (await u1.post("/v1/recall", json={"query": "cat", "user_id": "u2"})).status_code == 403
    recall = await u1.post("/v1/recall", json={"query": "does the user prefer email or phone? cat"})
    assert recall.status_code == 200
    assert all("u2" not in item["content"] for item in recall.json()["items"])
    assert any("email" in item["content"] for item in recall.json()["items"])
    receipt = (await u1.get(f"/v1/receipts/{recall.json()['receipt_id']}")).json()
    assert receipt["principal"]["user_id"] == "u1" and receipt["principal"]["role"] == "agent"
    assert (await u1.get("/v1/memories", params={"user_id": "u2"})).status_code == 403
    listed = (await u1.get("/v1/memories")).json()["items"]
    assert {m["user_id"] for m in listed} == {"u1"}
    tenant_wide = await u1.post("/v1/memories", json={"content": "for everyone", "visibility": "tenant"})
    assert tenant_wide.status_code == 403 and error_of(tenant_wide)["field"] == "visibility"


async def test_receipts_of_other_acting_users_are_hidden_from_agents(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    mid = (
        await agent.post("/v1/memories", json={"content": "The VPN password rotates monthly", "visibility": "tenant"})
    ).json()["id"]
    asked = await agent.post("/v1/recall", json={"query": "when does the VPN password rotate", "user_id": "alice"})
    rid = asked.json()["receipt_id"]
    assert [i["id"] for i in asked.json()["items"]] == [mid]
    assert (await agent.get(f"/v1/receipts/{rid}")).status_code == 404
    assert (await agent.get(f"/v1/receipts/{rid}", params={"user_id": "alice"})).status_code == 200
    assert (await agent.get(f"/v1/memories/{mid}/receipts")).json() == []
    by_alice = (await agent.get(f"/v1/memories/{mid}/receipts", params={"user_id": "alice"})).json()
    assert [r["id"] for r in by_alice] == [rid] and by_alice[0]["principal"]["user_id"] == "alice"
    reviewer = await make_client(role="reviewer")
    assert (await reviewer.get(f"/v1/receipts/{rid}")).status_code == 200
    assert [r["id"] for r in (await reviewer.get(f"/v1/memories/{mid}/receipts")).json()] == [rid]
    bob = await make_client(role="agent", user_id="bob")
    assert (await bob.get(f"/v1/receipts/{rid}")).status_code == 404


async def test_agent_scope_memories_of_no_agent_are_shared(make_client: MakeClient) -> None:
    """Decided (docs/security.md): a memory without agent_id is visible to every agent of its tenant; acting
    as an agent hides the memories of other agents."""
    writer = await make_client(role="agent")
    shared = await writer.post("/v1/memories", json={"content": "Refunds need a manager", "visibility": "tenant"})
    billing = await writer.post(
        "/v1/memories", json={"content": "Refund queue is at 40 tickets", "visibility": "tenant", "agent_id": "billing"}
    )
    support = await make_client(role="agent", agent_id="support")
    ids = {m["id"] for m in (await support.get("/v1/memories")).json()["items"]}
    assert shared.json()["id"] in ids and billing.json()["id"] not in ids
    found = (await support.post("/v1/recall", json={"query": "refund queue manager"})).json()["items"]
    assert [i["id"] for i in found] == [shared.json()["id"]]
    assert (await support.get(f"/v1/memories/{billing.json()['id']}")).status_code == 404
    assert (await writer.get(f"/v1/memories/{billing.json()['id']}")).status_code == 200  # unbound: no agent scope


async def test_relations_need_both_memories_visible(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    a = (await agent.post("/v1/memories", json={"content": "u1 note one", "user_id": "u1"})).json()["id"]
    b = (await agent.post("/v1/memories", json={"content": "u1 note two", "user_id": "u1"})).json()["id"]
    body = {"src_id": a, "dst_id": b, "type": "about"}
    assert (await agent.post("/v1/relations", json=body)).status_code == 404
    made = await agent.post("/v1/relations", json=body, params={"user_id": "u1"})
    assert made.status_code == 201 and made.json()["weight"] == 1.0


async def test_a_bound_key_is_held_to_the_visibility_rule_whatever_its_role(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    theirs = (await agent.post("/v1/memories", json={"content": "u2's private note", "user_id": "u2"})).json()["id"]
    bound_reviewer = await make_client(role="reviewer", user_id="u1")
    assert (await bound_reviewer.get(f"/v1/memories/{theirs}")).status_code == 404
    assert (await bound_reviewer.get("/v1/memories")).json()["items"] == []
    asked = await agent.post("/v1/recall", json={"query": "private note", "user_id": "u2"})
    assert (await bound_reviewer.get(f"/v1/receipts/{asked.json()['receipt_id']}")).status_code == 404
    unbound_reviewer = await make_client(role="reviewer")
    assert (await unbound_reviewer.get(f"/v1/memories/{theirs}")).status_code == 200


async def test_an_admin_changes_the_tenants_language_and_every_memory_follows(make_client: MakeClient) -> None:
    admin = await make_client(role="admin")
    await admin.post("/v1/memories", json={"content": "Die Rechnungen gehen in Euro raus", "visibility": "tenant"})
    assert (await admin.get("/v1/tenant")).json()["fts_config"] == "english"
    before = (await admin.post("/v1/recall", json={"query": "Rechnung", "preset": "lexical"})).json()["items"]
    assert before == []  # English stemming does not relate the two forms
    unknown = await admin.patch("/v1/tenant", json={"fts_config": "klingon"})
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "fts_config"
    for i in range(120):  # more than a reindex batch
        await admin.post("/v1/memories", json={"content": f"Notiz Nummer {i}", "visibility": "tenant"})
    changed = await admin.patch("/v1/tenant", json={"fts_config": "german"})
    assert changed.status_code == 200 and changed.json()["fts_config"] == "german"
    assert changed.json()["memories_to_reindex"] == 121  # indexed again in the background
    for _ in range(100):
        if (await admin.get("/v1/tenant")).json()["memories_to_reindex"] == 0:
            break
        await asyncio.sleep(0.1)
    assert (await admin.get("/v1/tenant")).json()["memories_to_reindex"] == 0
    # German stemming now applies to stored memories and queries alike: "Rechnung" finds "Rechnungen".
    found = (await admin.post("/v1/recall", json={"query": "Rechnung", "preset": "lexical"})).json()["items"]
    assert [i["content"] for i in found] == ["Die Rechnungen gehen in Euro raus"]
    other = await make_client("globex", role="admin")
    assert (await other.get("/v1/tenant")).json()["fts_config"] == "english"  # one tenant's setting


async def test_an_admin_sets_the_tenants_trust_in_each_source(make_client: MakeClient) -> None:
    admin = await make_client(role="admin")
    agent = await make_client(role="agent")
    assert (await admin.get("/v1/tenant")).json()["source_trust"]["agent_inference"] == 0.5
    changed = await admin.patch("/v1/tenant", json={"source_trust": {"agent_inference": 0.2}})
    assert changed.status_code == 200, changed.text
    trust = changed.json()["source_trust"]
    assert trust["agent_inference"] == 0.2 and trust["tool_result"] == 1.0 and changed.json()["fts_config"] == "english"
    for body, field in (
        ({"source_trust": {"rumour": 0.5}}, "source_trust.rumour"),
        ({"source_trust": {"tool_result": 2}}, "source_trust.tool_result"),
        ({}, None),
    ):
        bad = await admin.patch("/v1/tenant", json=body)
        assert bad.status_code == 422, bad.text
        if field:
            assert bad.json()["error"]["field"].startswith(field), bad.json()
    assert (await agent.patch("/v1/tenant", json={"source_trust": {"tool_result": 0.1}})).status_code == 403
    assert (await admin.get("/v1/tenant")).json()["source_trust"]["agent_inference"] == 0.2


async def test_a_bound_key_of_any_role_stays_inside_its_binding(make_client: MakeClient) -> None:
    """The hostile review's cases: bound reviewer and admin keys wrote tenant-wide and system memories, a
    bound admin made itself an unbound admin key, a key bound to a user changed tenant-wide memories."""
    for role, note in (("reviewer", "u1 keeps a blue notebook"), ("admin", "u1 drinks tea in the afternoon")):
        bound = await make_client(role=role, user_id="u1")
        for visibility in ("tenant", "system"):
            r = await bound.post("/v1/memories", json={"content": "for everyone", "visibility": visibility})
            assert r.status_code == 403 and r.json()["error"]["field"] == "visibility", (role, visibility)
        own = (await bound.post("/v1/memories", json={"content": note})).json()["id"]
        widened = await bound.patch(f"/v1/memories/{own}", json={"visibility": "system"}, headers={"If-Match": "1"})
        assert widened.status_code == 403
    admin_u1 = await make_client(role="admin", user_id="u1")
    for call in (admin_u1.post("/v1/keys", json={"role": "admin"}), admin_u1.get("/v1/keys"),
                 admin_u1.patch("/v1/tenant", json={"fts_config": "simple"})):  # fmt: skip
        r = await call
        assert r.status_code == 403 and "bound" in r.json()["error"]["message"]
    agent = await make_client(role="agent")
    shared = (await agent.post("/v1/memories", json={"content": "Team rule", "visibility": "tenant"})).json()["id"]
    others = await agent.post("/v1/memories", json={"content": "u2 flow", "user_id": "u2", "visibility": "workflow"})
    u1 = await make_client(role="agent", user_id="u1")
    assert (await u1.get(f"/v1/memories/{shared}")).status_code == 200  # it may read them
    for mid in (shared, others.json()["id"]):
        edit = await u1.patch(f"/v1/memories/{mid}", json={"content": "edited by u1"}, headers={"If-Match": "1"})
        assert edit.status_code == 403, edit.text
        assert (await u1.post(f"/v1/memories/{mid}/archive")).status_code == 403
    mine = (await u1.post("/v1/memories", json={"content": "u1 note"})).json()["id"]
    assert (
        await u1.patch(f"/v1/memories/{mine}", json={"content": "u1 note, edited"}, headers={"If-Match": "1"})
    ).status_code == 200


async def test_a_burst_beyond_a_tenants_share_is_told_when_to_retry(make_client: MakeClient) -> None:
    """Refused at once, with Retry-After (docs/security.md says why not queued): a client that honours it
    gets every write through."""
    agent = await make_client(role="agent")

    async def write(i: int) -> int:
        for _ in range(5):
            r = await agent.post("/v1/memories", json={"content": f"burst note {i}"})
            if r.status_code != 429:
                return r.status_code
            assert r.json()["error"]["code"] == "throttled"
            await asyncio.sleep(float(r.headers["retry-after"]))
        return 429

    assert await asyncio.gather(*(write(i) for i in range(20))) == [201] * 20
    assert len((await agent.get("/v1/memories", params={"limit": 50})).json()["items"]) == 20
