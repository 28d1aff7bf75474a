"""Procedural memory (SPEC 6.7) over REST: versions supersede, old ones stay readable, recall finds the one
in force, bad names and bodies are a 422 naming the field."""

from __future__ import annotations

from tests.api.conftest import MakeClient, error_of

V1 = {"description": "billing disputes", "steps": ["Check the invoice", "Check payment status", "Draft a reply"]}
V2 = {"description": "billing disputes", "steps": ["Check the invoice", "Check payment status",
                                                    "Check the refund policy", "Draft a reply"]}  # fmt: skip


async def test_versions_supersede_and_stay_readable(make_client: MakeClient) -> None:
    agent = await make_client()
    first = await agent.put("/v1/procedures/billing-dispute", json=V1)
    assert first.status_code == 201 and first.json()["version"] == 1 and first.json()["current"]
    same = await agent.put("/v1/procedures/billing-dispute", json=V1)
    assert same.status_code == 200 and same.json()["id"] == first.json()["id"]  # nothing new
    second = await agent.put("/v1/procedures/billing-dispute", json=V2)
    assert second.status_code == 201 and second.json()["version"] == 2
    now = (await agent.get("/v1/procedures/billing-dispute")).json()
    assert now["steps"] == V2["steps"] and now["version"] == 2 and now["current"]
    old = (await agent.get("/v1/procedures/billing-dispute", params={"version": 1})).json()
    assert old["steps"] == V1["steps"] and not old["current"] and old["superseded_by"] == now["id"]
    versions = (await agent.get("/v1/procedures/billing-dispute/versions")).json()
    assert [v["version"] for v in versions] == [1, 2] and [v["current"] for v in versions] == [False, True]
    recalled = await agent.post("/v1/recall", json={"query": "how do I handle a billing dispute refund",
                                                    "kinds": ["procedural"]})  # fmt: skip
    items = recalled.json()["items"]
    assert items and items[0]["id"] == now["id"] and all(i["id"] != old["id"] for i in items)
    # Asked for by name, among other procedures: the one in force, only.
    await agent.put("/v1/procedures/refund-approval", json={"description": "refunds", "steps": ["Check the refund"]})
    named = await agent.post("/v1/recall", json={"query": "refund steps", "kinds": ["procedural"],
                                                 "metadata": {"procedure_name": "billing-dispute"}})  # fmt: skip
    assert [i["id"] for i in named.json()["items"]] == [now["id"]]


async def test_bad_procedures_name_the_field(make_client: MakeClient) -> None:
    agent = await make_client()
    assert error_of(await agent.get("/v1/procedures/nothing-yet"))["field"] == "name"
    for body, field in (({"steps": []}, "steps"), ({"steps": [""]}, "steps"), ({"steps": ["a"], "x": 1}, "x")):
        r = await agent.put("/v1/procedures/p1", json=body)
        assert r.status_code == 422 and error_of(r)["field"].startswith(field), r.text
    bad = await agent.put("/v1/procedures/has%20space", json=V1)
    assert bad.status_code == 422 and error_of(bad)["field"] == "name"
    await agent.put("/v1/procedures/p2", json=V1)
    missing = await agent.get("/v1/procedures/p2", params={"version": 5})
    assert missing.status_code == 404 and error_of(missing)["field"] == "version"
    bound = await make_client(user_id="u1")
    refused = await bound.put("/v1/procedures/p3", json=V1)  # a tenant-wide memory needs an unbound key
    assert refused.status_code == 403
