"""The REST surface of the write path (SPEC 9), through the real app and database."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from engram import Engram
from engram.api import create_app
from tests.api.conftest import MakeClient, error_of


async def test_create_then_replay(client: httpx.AsyncClient) -> None:
    body = {"content": "Customer prefers email over phone", "external_id": "msg-1", "kind": "semantic"}
    first = await client.post("/v1/memories", json=body)
    assert first.status_code == 201, first.text
    data = first.json()
    assert set(data) >= {"id", "revision", "status", "replayed", "reasons"}
    assert data["revision"] == 1 and data["status"] == "active" and data["replayed"] is False
    assert first.headers["location"] == f"/v1/memories/{data['id']}"
    again = await client.post("/v1/memories", json=body)
    assert again.status_code == 200
    assert again.json()["id"] == data["id"] and again.json()["replayed"] is True
    conflict = await client.post("/v1/memories", json={**body, "content": "Customer prefers phone"})
    assert conflict.status_code == 409
    err = error_of(conflict)
    assert err["code"] == "idempotency_conflict" and err["field"] == "external_id"
    assert err["existing_id"] == data["id"]


BAD_INPUTS = [
    ({"content": ""}, "content"),
    ({"content": "   \n\t  "}, "content"),
    ({"content": "x" * 12_001}, "content"),
    ({"content": "ok text", "kind": "dream"}, "kind"),
    ({"content": "ok text", "confidence": 1.5}, "confidence"),
    ({"content": "ok text", "importance": -0.1}, "importance"),
    (
        {"content": "ok text", "valid_from": "2026-05-02T00:00:00Z", "valid_until": "2026-05-01T00:00:00Z"},
        "valid_until",
    ),
    ({"content": "ok text", "valid_until": "2001-01-01T00:00:00Z"}, "valid_until"),
    ({"content": "ok text", "visibility": "everyone"}, "visibility"),
    ({"content": "ok text", "source": {"type": "rumour"}}, "source.type"),
    ({"content": "ok text", "tags": ["fine", ""]}, "tags[1]"),
    ({"content": "ok text", "surprise": 1}, "surprise"),
    ({"kind": "semantic"}, "content"),
]


@pytest.mark.parametrize(("body", "field"), BAD_INPUTS, ids=[f for _, f in BAD_INPUTS])
async def test_bad_input_is_422_naming_the_field(client: httpx.AsyncClient, body: object, field: str) -> None:
    resp = await client.post("/v1/memories", json=body)
    assert resp.status_code == 422, resp.text
    err = error_of(resp)
    assert err["code"] == "validation_error"
    assert err["field"] == field
    listing = await client.get("/v1/memories")
    assert listing.json()["items"] == []  # nothing half-written


async def test_malformed_json_is_422(client: httpx.AsyncClient) -> None:
    resp = await client.post(
        "/v1/memories", content=b'{"content": "unterminated', headers={"Content-Type": "application/json"}
    )
    assert resp.status_code == 422
    err = error_of(resp)
    assert err["field"] == "body"
    assert "JSON" in str(err["message"])


async def test_error_messages_say_what_is_allowed(client: httpx.AsyncClient) -> None:
    kind = error_of(await client.post("/v1/memories", json={"content": "x y", "kind": "dream"}))
    assert "semantic" in str(kind["message"]) and "episodic" in str(kind["message"])
    big = error_of(await client.post("/v1/memories", json={"content": "x" * 12_001}))
    assert "12000" in str(big["message"])


async def test_get_list_and_pagination(client: httpx.AsyncClient) -> None:
    ids = []
    for i in range(5):
        r = await client.post("/v1/memories", json={"content": f"note number {i}", "user_id": "u1", "tags": ["t"]})
        ids.append(r.json()["id"])
    await client.post("/v1/memories", json={"content": "other user", "user_id": "u2"})
    got = await client.get(f"/v1/memories/{ids[0]}", params={"user_id": "u1"})  # an agent acts as the user
    assert got.status_code == 200 and got.json()["content"] == "note number 0"
    assert got.headers["etag"] == '"1"'
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"user_id": "u1", "limit": 2, "tag": "t"}
        if cursor:
            params["cursor"] = cursor
        page = (await client.get("/v1/memories", params=params)).json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == list(reversed(ids))
    bad = await client.get("/v1/memories", params={"cursor": "!!!"})
    assert bad.status_code == 422 and error_of(bad)["field"] == "cursor"
    bad_kind = await client.get("/v1/memories", params={"kind": "dream"})
    assert bad_kind.status_code == 422 and error_of(bad_kind)["field"] == "kind"


async def test_patch_needs_if_match(client: httpx.AsyncClient) -> None:
    mid = (await client.post("/v1/memories", json={"content": "Deploy window is Tuesday"})).json()["id"]
    missing = await client.patch(f"/v1/memories/{mid}", json={"content": "Deploy window is Wednesday"})
    assert missing.status_code == 428 and error_of(missing)["field"] == "If-Match"
    ok = await client.patch(
        f"/v1/memories/{mid}", json={"content": "Deploy window is Wednesday"}, headers={"If-Match": '"1"'}
    )
    assert ok.status_code == 200 and ok.json()["revision"] == 2 and ok.headers["etag"] == '"2"'
    stale = await client.patch(f"/v1/memories/{mid}", json={"importance": 0.2}, headers={"If-Match": "1"})
    assert stale.status_code == 409
    err = error_of(stale)
    assert err["code"] == "revision_conflict" and err["current_revision"] == 2
    garbage = await client.patch(f"/v1/memories/{mid}", json={"importance": 0.2}, headers={"If-Match": "abc"})
    assert garbage.status_code == 422 and error_of(garbage)["field"] == "If-Match"
    null = await client.patch(f"/v1/memories/{mid}", json={"content": None}, headers={"If-Match": "2"})
    assert null.status_code == 422 and error_of(null)["field"] == "content"
    window = await client.patch(
        f"/v1/memories/{mid}", json={"valid_until": "2000-01-01T00:00:00Z"}, headers={"If-Match": "2"}
    )
    assert window.status_code == 422 and error_of(window)["field"] == "valid_until"
    empty = await client.patch(f"/v1/memories/{mid}", json={}, headers={"If-Match": "2"})
    assert empty.status_code == 422
    scope = await client.patch(f"/v1/memories/{mid}", json={"user_id": "x"}, headers={"If-Match": "2"})
    assert scope.status_code == 422 and error_of(scope)["field"] == "user_id"
    final = (await client.get(f"/v1/memories/{mid}")).json()
    assert final["revision"] == 2 and final["content"] == "Deploy window is Wednesday"


async def test_concurrent_patches_one_wins_one_conflicts(client: httpx.AsyncClient) -> None:
    mid = (await client.post("/v1/memories", json={"content": "Shared note"})).json()["id"]
    a, b = await asyncio.gather(
        client.patch(f"/v1/memories/{mid}", json={"content": "Edit from phone"}, headers={"If-Match": "1"}),
        client.patch(f"/v1/memories/{mid}", json={"content": "Edit from laptop"}, headers={"If-Match": "1"}),
    )
    assert sorted([a.status_code, b.status_code]) == [200, 409]
    winner = a if a.status_code == 200 else b
    history = (await client.get(f"/v1/memories/{mid}/history")).json()
    assert [h["revision"] for h in history] == [1, 2]
    assert history[-1]["snapshot"]["content"] == winner.json()["content"]


async def test_archive_delete_history(make_client: MakeClient) -> None:
    client = await make_client(role="reviewer")  # deleting takes a reviewer
    mid = (await client.post("/v1/memories", json={"content": "Temporary access for Bob"})).json()["id"]
    arch = await client.post(f"/v1/memories/{mid}/archive")
    assert arch.status_code == 200 and arch.json()["status"] == "archived"
    hist = (await client.get(f"/v1/memories/{mid}/history")).json()
    assert [h["change"] for h in hist] == ["created", "archived"]
    stale_delete = await client.delete(f"/v1/memories/{mid}", headers={"If-Match": "1"})
    assert stale_delete.status_code == 409
    gone = await client.delete(f"/v1/memories/{mid}")
    assert gone.status_code == 200 and gone.json()["subject"] == f"memory:{mid}"  # the deletion certificate
    assert gone.json()["memories"] == [mid] and gone.json()["removed"]["memories"] == 1
    assert (await client.get(f"/v1/memories/{mid}")).status_code == 404
    assert (await client.get(f"/v1/memories/{mid}/history")).status_code == 404
    again = await client.delete(f"/v1/memories/{mid}")  # deleted: the tombstone says so
    assert again.status_code == 409 and error_of(again)["code"] == "not_current"


async def test_batch_reports_per_item(client: httpx.AsyncClient) -> None:
    resp = await client.post(
        "/v1/memories:batch",
        json={"items": [{"content": "one good"}, {"content": "", "kind": "semantic"}, {"content": "two good"}]},
    )
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert (data["created"], data["replayed"], data["failed"]) == (2, 0, 1)
    assert [r["ok"] for r in data["results"]] == [True, False, True]
    assert data["results"][1]["error"]["field"] == "items[1].content"
    deferred = await client.post(
        "/v1/memories:batch", params={"embed": "deferred"}, json={"items": [{"content": "later embedded"}]}
    )
    assert deferred.json()["results"][0]["result"]["embedded"] is False
    too_many = await client.post("/v1/memories:batch", json={"items": [{"content": "x"}] * 1001})
    assert too_many.status_code == 422 and error_of(too_many)["field"] == "items"


async def test_tenant_comes_only_from_the_key(make_client: MakeClient) -> None:
    acme = await make_client("acme")
    globex = await make_client("globex", role="admin")
    mid = (await acme.post("/v1/memories", json={"content": "acme only"})).json()["id"]
    assert (await globex.get(f"/v1/memories/{mid}")).status_code == 404
    assert (
        await globex.patch(f"/v1/memories/{mid}", json={"importance": 1}, headers={"If-Match": "1"})
    ).status_code == 404
    assert (await globex.delete(f"/v1/memories/{mid}")).status_code == 404
    assert (await globex.get("/v1/memories")).json()["items"] == []
    smuggled = await globex.post("/v1/memories", json={"content": "try", "tenant_id": "acme"})
    assert smuggled.status_code == 422 and error_of(smuggled)["field"] == "tenant_id"


async def test_authentication(engram: Engram) -> None:
    app = create_app(engram, run_worker=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as anon:
        none = await anon.get("/v1/memories")
        assert none.status_code == 401 and error_of(none)["code"] == "unauthenticated"
        assert none.headers["www-authenticate"] == "Bearer"
        wrong = await anon.get("/v1/memories", headers={"Authorization": "Bearer egm_" + "x" * 43})
        assert wrong.status_code == 401
        health = await anon.get("/healthz")
        assert health.status_code == 200 and health.json()["database"] == "ok"
        assert (await anon.get(f"/v1/memories/{uuid.uuid4()}")).status_code == 401
        openapi = await anon.get("/openapi.json")
        assert "/v1/memories" in openapi.json()["paths"]


async def test_unknown_id_is_404_and_bad_id_is_422(client: httpx.AsyncClient) -> None:
    missing = await client.get(f"/v1/memories/{uuid.uuid4()}")
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    bad = await client.get("/v1/memories/not-a-uuid")
    assert bad.status_code == 422 and error_of(bad)["field"] == "memory_id"


async def test_recall_receipts_and_relations_over_http(make_client: MakeClient) -> None:
    acme = await make_client("acme")
    a = (await acme.post("/v1/memories", json={"content": "The VPN endpoint is vpn.acme.example"})).json()["id"]
    b = (await acme.post("/v1/memories", json={"content": "VPN access needs a hardware token"})).json()["id"]
    rel = await acme.post("/v1/relations", json={"src_id": a, "dst_id": b, "type": "about", "weight": 0.5})
    assert rel.status_code == 201 and rel.json()["type"] == "about"
    bad_rel = await acme.post("/v1/relations", json={"src_id": a, "dst_id": a, "type": "about"})
    assert bad_rel.status_code == 422
    resp = await acme.post("/v1/recall", json={"query": "vpn endpoint", "max_items": 2})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert set(body) >= {"items", "packet", "receipt_id", "degraded", "abstain"}
    assert body["items"][0]["id"] == a and body["items"][0]["ranks"]
    receipt = await acme.get(f"/v1/receipts/{body['receipt_id']}")
    assert receipt.status_code == 200
    assert [s["id"] for s in receipt.json()["selected"]] == [i["id"] for i in body["items"]]
    why = await acme.get(f"/v1/memories/{a}/receipts")
    assert body["receipt_id"] in [r["id"] for r in why.json()]
    globex = await make_client("globex")
    assert (await globex.get(f"/v1/receipts/{body['receipt_id']}")).status_code == 404
    assert (await globex.post("/v1/recall", json={"query": "vpn endpoint"})).json()["items"] == []
    empty = await acme.post("/v1/recall", json={"query": "  "})
    assert empty.status_code == 422 and error_of(empty)["field"] == "query"
    bad = await acme.post("/v1/recall", json={"query": "x", "preset": "magic"})
    assert bad.status_code == 422 and error_of(bad)["field"] == "preset"
