"""Actions over REST (SPEC 7): 201 then 200 for a replay, 409 for a reused key, 4xx naming the field,
dead letters listed and retried by a reviewer, and keys bound to a user held to that user's actions."""

from __future__ import annotations

from engram import Engram
from engram.outbox.dispatcher import Dispatcher
from tests.api.conftest import MakeClient, error_of
from tests.receiver import receiver


async def test_actions_over_rest(make_client: MakeClient, engram: Engram) -> None:
    agent = await make_client()
    with receiver() as hook:
        hook.script = {"bounce": [410]}
        body = {"idempotency_key": "ship-1", "url": hook.url, "payload": {"order": 1},
                "memory": {"content": "Promised the customer shipping today", "user_id": "c1"}}  # fmt: skip
        first = await agent.post("/v1/actions", json=body)
        assert first.status_code == 201, first.text
        assert first.headers["Location"] == f"/v1/actions/{first.json()['action']['id']}"
        replay = await agent.post("/v1/actions", json=body)
        assert replay.status_code == 200 and replay.json()["replayed"] is True
        assert replay.json()["action"]["id"] == first.json()["action"]["id"]
        reused = await agent.post("/v1/actions", json={**body, "payload": {"order": 2}})
        assert reused.status_code == 409 and error_of(reused)["field"] == "idempotency_key"
        for bad, field in (({"url": "file:///etc/passwd"}, "url"), ({"handler": "Nope"}, "handler"),
                           ({"payload": [1]}, "payload"), ({"memory": {"content": ""}}, "memory.content"),
                           ({"idempotency_key": ""}, "idempotency_key")):  # fmt: skip
            r = await agent.post("/v1/actions", json={**body, "idempotency_key": "x", **bad})
            assert r.status_code == 422, (bad, r.text)
            assert error_of(r)["field"] == field, (bad, error_of(r))
        bounce = await agent.post("/v1/actions", json={"idempotency_key": "bounce", "url": hook.url})
        await Dispatcher(engram).run_once()
        done = await agent.get(f"/v1/actions/{first.json()['action']['id']}")
        assert done.json()["status"] == "done" and done.json()["outcome_memory_id"]
        dead = (await agent.get("/v1/actions", params={"status": "dead"})).json()["items"]
        assert [a["id"] for a in dead] == [bounce.json()["action"]["id"]] and "410" in dead[0]["last_error"]
        retry = f"/v1/actions/{dead[0]['id']}/retry"
        assert (await agent.post(retry)).status_code == 403  # a reviewer's decision
        reviewer = await make_client(role="reviewer")
        assert (await reviewer.post(retry)).json()["status"] == "pending"
        assert (await reviewer.post(retry)).status_code == 409  # no longer dead
        assert (await agent.get("/v1/actions", params={"status": "lost"})).status_code == 422
        assert (await agent.get("/v1/actions/not-a-uuid")).status_code == 422

        bound = await make_client(user_id="c2")
        mine = await bound.post("/v1/actions", json={"idempotency_key": "c2-only", "url": hook.url})
        assert mine.status_code == 201 and mine.json()["action"]["user_id"] == "c2"
        assert (await bound.get(f"/v1/actions/{first.json()['action']['id']}")).status_code == 404
        assert [a["idempotency_key"] for a in (await bound.get("/v1/actions")).json()["items"]] == ["c2-only"]
