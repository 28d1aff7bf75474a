"""Workflow state over REST (SPEC 6.1): revisions with If-Match, resuming after a restart and a day later,
freshness of cached tool results, ending a workflow, and bad input as a 4xx that names the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engram import Engram
from engram.api import create_app
from tests.api.conftest import MakeClient, error_of
from tests.conftest import settings_for

STATE = {
    "goal": "Refund invoice INV-7 in EUR",
    "completed_steps": ["looked up invoice INV-7", "checked payment status"],
    "open_questions": ["Does the refund policy cover partial refunds?"],
    "blockers": [],
    "tool_results": {
        "billing.invoice": {
            "value": {"id": "INV-7", "amount": 120.5, "currency": "EUR"},
            "source": "GET /billing/invoices/INV-7",
            "source_version": "etag-41",
            "fresh_until": "2100-01-01T00:00:00Z",
        },
        "fx.rate": {"value": 1.08, "source": "fx:USD/EUR", "fresh_until": "2000-01-01T00:00:00Z"},
    },
    "notes": {"customer_tone": "polite", "attempts": 1},
}


async def test_put_get_and_revisions(make_client: MakeClient) -> None:
    agent = await make_client()
    first = await agent.put("/v1/workflows/wf-refund-7/state", json=STATE)
    assert first.status_code == 201, first.text
    assert first.headers["ETag"] == '"1"' and first.json()["revision"] == 1
    got = await agent.get("/v1/workflows/wf-refund-7/state")
    body = got.json()
    assert got.status_code == 200 and got.headers["ETag"] == '"1"'
    assert body["goal"] == STATE["goal"] and body["completed_steps"] == STATE["completed_steps"]
    assert body["notes"] == STATE["notes"] and body["status"] == "running"
    invoice = body["tool_results"]["billing.invoice"]
    assert invoice["value"] == STATE["tool_results"]["billing.invoice"]["value"] and invoice["fresh"] is True
    assert invoice["fetched_at"] is not None and invoice["source_version"] == "etag-41"
    assert body["tool_results"]["fx.rate"]["fresh"] is False

    # The next write names the revision it read; a stale one is a 409, none a 428.
    step = {**STATE, "completed_steps": [*STATE["completed_steps"], "drafted the reply"]}
    second = await agent.put("/v1/workflows/wf-refund-7/state", json=step, headers={"If-Match": '"1"'})
    assert second.status_code == 200 and second.json()["revision"] == 2
    stale = await agent.put("/v1/workflows/wf-refund-7/state", json=STATE, headers={"If-Match": "1"})
    assert stale.status_code == 409 and error_of(stale)["code"] == "revision_conflict"
    assert error_of(stale)["current_revision"] == 2
    blind = await agent.put("/v1/workflows/wf-refund-7/state", json=STATE)
    assert blind.status_code == 428 and error_of(blind)["field"] == "If-Match"
    old = await agent.get("/v1/workflows/wf-refund-7/state", params={"revision": 1})
    assert old.json()["completed_steps"] == STATE["completed_steps"] and old.json()["revision"] == 1
    assert (await agent.get("/v1/workflows/wf-refund-7/state")).json()["completed_steps"][-1] == "drafted the reply"


async def test_bad_input_names_the_field(make_client: MakeClient) -> None:
    agent = await make_client()
    missing = await agent.get("/v1/workflows/nope/state")
    assert missing.status_code == 404 and error_of(missing)["field"] == "workflow_id"
    for body, field in (
        ({"goal": 5}, "goal"),
        ({"completed_steps": "one"}, "completed_steps"),
        ({"tool_results": {"bad name!": {"value": 1}}}, "tool_results"),
        ({"tool_results": {"t": {"value": 1, "fresh_until": 12}}}, "tool_results"),
        ({"status": "paused"}, "status"),
        ({"surprise": True}, "surprise"),
        ({"notes": {"x": "y" * 20_000}}, "notes"),
    ):
        r = await agent.put("/v1/workflows/wf-bad/state", json=body)
        assert r.status_code == 422, (body, r.text)
        assert error_of(r)["field"].startswith(field), (body, error_of(r))
    r = await agent.put("/v1/workflows/wf-bad/state", json={}, headers={"If-Match": "abc"})
    assert r.status_code == 422 and error_of(r)["field"] == "If-Match"
    assert (await agent.get("/v1/workflows/wf-bad/state")).status_code == 404  # nothing half-written


async def test_ending_expires_working_memories_and_freezes_the_state(make_client: MakeClient) -> None:
    agent = await make_client()
    work = {"content": "Draft reply 2 for INV-7 is in the editor", "kind": "working", "workflow_id": "wf-end",
            "visibility": "workflow"}  # fmt: skip
    kept = {"content": "Customer prefers email", "kind": "semantic", "workflow_id": "wf-end", "visibility": "workflow"}
    work_id = (await agent.post("/v1/memories", json=work)).json()["id"]
    kept_id = (await agent.post("/v1/memories", json=kept)).json()["id"]
    await agent.put("/v1/workflows/wf-end/state", json={"goal": "Answer the customer"})
    ended = await agent.put(
        "/v1/workflows/wf-end/state", json={"goal": "Answer the customer", "status": "ended"}, headers={"If-Match": "1"}
    )
    assert ended.status_code == 200 and ended.json()["status"] == "ended" and ended.json()["expired_memories"] == 1
    assert ended.json()["ended_at"] is not None
    work_now = (await agent.get(f"/v1/memories/{work_id}", params={"workflow_id": "wf-end"})).json()
    assert work_now["expires_at"] is not None and work_now["revision"] == 2
    assert (await agent.get(f"/v1/memories/{kept_id}", params={"workflow_id": "wf-end"})).json()["expires_at"] is None
    recalled = await agent.post("/v1/recall", json={"query": "draft reply editor", "workflow_id": "wf-end"})
    assert work_id not in [i["id"] for i in recalled.json()["items"]]
    history = (await agent.get(f"/v1/memories/{work_id}/history", params={"workflow_id": "wf-end"})).json()
    assert [h["change"] for h in history] == ["created", "updated"]
    again = await agent.put("/v1/workflows/wf-end/state", json={"goal": "more"}, headers={"If-Match": "2"})
    assert again.status_code == 409 and "ended" in error_of(again)["message"]
    assert (await agent.get("/v1/workflows/wf-end/state")).json()["goal"] == "Answer the customer"


async def test_a_bound_key_reaches_only_its_users_workflows(make_client: MakeClient) -> None:
    alice = await make_client(user_id="alice")
    bob = await make_client(user_id="bob")
    made = await alice.put("/v1/workflows/wf-alice/state", json={"goal": "Plan Alice's trip"})
    assert made.status_code == 201 and made.json()["user_id"] == "alice"
    assert (await bob.get("/v1/workflows/wf-alice/state")).status_code == 404
    taken = await bob.put("/v1/workflows/wf-alice/state", json={"goal": "x"}, headers={"If-Match": "1"})
    assert taken.status_code == 404
    assert (await alice.get("/v1/workflows/wf-alice/state")).json()["goal"] == "Plan Alice's trip"
    wrong = await alice.put("/v1/workflows/wf-other/state", json={"goal": "x", "user_id": "bob"})
    assert wrong.status_code == 403 and error_of(wrong)["field"] == "user_id"


async def test_resumes_after_a_restart_and_a_day_later(database_url: str) -> None:
    first = await Engram.open(settings_for(database_url), tenant="acme")
    try:
        await first.put_workflow_state("wf-long", STATE)
        written = await first.workflow_state("wf-long")
    finally:
        await first.close()
    later = await Engram.open(settings_for(database_url), tenant="acme")
    try:
        day = datetime.now(UTC) + timedelta(hours=24)
        later.clock = lambda: day
        back = await later.workflow_state("wf-long")
        assert back.model_dump(exclude={"tool_results"}) == written.model_dump(exclude={"tool_results"})
        assert {n: r.value for n, r in back.tool_results.items()} == {
            n: r["value"]
            for n, r in STATE["tool_results"].items()  # type: ignore[attr-defined]
        }
        # A result fresh for an hour is stale a day later; one without fresh_until stays fresh.
        await later.put_workflow_state(
            "wf-hour",
            {"tool_results": {"a": {"value": 1, "fresh_until": (day - timedelta(hours=23)).isoformat()},
                              "b": {"value": 2}}},
        )  # fmt: skip
        hour = await later.workflow_state("wf-hour")
        assert not hour.tool_results["a"].fresh and hour.tool_results["b"].fresh
        assert hour.tool_results["b"].fetched_at == day
        app = create_app(later, run_worker=False)
        assert set(app.openapi()["paths"]["/v1/workflows/{workflow_id}/state"]) == {"get", "put"}
    finally:
        await later.close()
