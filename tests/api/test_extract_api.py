"""POST /v1/memories:extract: candidates in the answer, each written through admission like an item of a batch
(or only screened, in a dry run), and a 4xx naming the field for a bad request."""

from __future__ import annotations

from engram import Engram
from tests.api.conftest import MakeClient, error_of

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
CONVERSATION = "\n".join(
    [
        "User: Hi there!",
        f"User: I live in Porto. My deploy token is {GITHUB}. I think I like tea.",
        "Assistant: Noted. The nightly backup failed again.",
        "User: thanks",
    ]
)


async def test_candidates_are_written_through_admission(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    r = await agent.post("/v1/memories:extract", json={"text": CONVERSATION, "user_id": "u1", "session_id": "s1"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["extractor"] == "rules" and body["dry_run"] is False and body["dropped"] == []
    assert GITHUB not in r.text
    items = body["candidates"]
    assert [(i["candidate"]["kind"], i["candidate"]["subtype"], i["admission"]["decision"]) for i in items] == [
        ("semantic", "fact", "admit"),
        ("semantic", "fact", "admit_redacted"),
        ("semantic", "preference", "reject"),
        ("episodic", "failure", "admit"),
    ]
    location, token, tea, backup = items
    assert location["candidate"]["fact_key"] == "user.location" and location["ok"]
    assert location["result"]["status"] == "active" and "created" in location["result"]["reasons"]
    assert "[REDACTED:github_token]" in token["candidate"]["content"]
    assert "secret_redacted" in token["result"]["reasons"]
    assert not tea["ok"] and tea["result"] is None
    assert tea["error"]["code"] == "policy_rejected" and tea["error"]["reasons"] == ["low_confidence"]
    assert tea["error"]["field"] == "items[2].confidence"
    assert backup["ok"] and backup["candidate"]["source_type"] == "user_message"
    assert (body["created"], body["failed"]) == (3, 1)

    stored = await agent.get(f"/v1/memories/{location['result']['id']}", params={"user_id": "u1"})
    assert stored.status_code == 200
    memory = stored.json()
    assert (memory["user_id"], memory["session_id"], memory["metadata"]) == (
        "u1", "s1", {"extracted_by": "rules:location"},
    )  # fmt: skip


async def test_a_dry_run_writes_nothing(make_client: MakeClient, engram: Engram) -> None:
    agent = await make_client(role="agent")
    r = await agent.post(
        "/v1/memories:extract",
        json={"text": CONVERSATION, "user_id": "u1", "dry_run": True, "kinds": ["episodic"], "max_candidates": 5},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["dry_run"] is True and body["created"] == 0
    assert [(i["candidate"]["content"], i["admission"]["decision"], i["result"]) for i in body["candidates"]] == [
        ("The nightly backup failed again.", "admit", None)
    ]
    assert (await engram.list(user_id="u1")).items == []


async def test_the_source_and_the_binding_are_the_callers(make_client: MakeClient) -> None:
    bound = await make_client(role="agent", user_id="u1")
    r = await bound.post("/v1/memories:extract", json={"text": "I work at Globex.", "user_id": "u2"})
    assert r.status_code == 403 and error_of(r)["field"] == "user_id"
    r = await bound.post(
        "/v1/memories:extract",
        json={"text": "I work at Globex.", "source": {"type": "document", "ref": "doc:7"}},
    )
    assert r.status_code == 200, r.text
    (item,) = r.json()["candidates"]
    assert item["candidate"]["source_type"] == "document"
    got = await bound.get(f"/v1/memories/{item['result']['id']}")
    assert got.json()["user_id"] == "u1" and got.json()["source"] == {"type": "document", "ref": "doc:7"}


async def test_bad_requests_name_the_field(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    cases = [
        ({}, "text"),
        ({"text": ""}, "text"),
        ({"text": "   "}, "text"),
        ({"text": "x" * 32_001}, "text"),
        ({"text": "I live in Porto", "dry_run": "perhaps"}, "dry_run"),
        ({"text": "I live in Porto", "max_candidates": 101}, "max_candidates"),
        ({"text": "I live in Porto", "kinds": ["gossip"]}, "kinds[0]"),
        ({"text": "I live in Porto", "source": {"type": "system_event"}}, "source.type"),
        ({"text": "I live in Porto", "visibility": "everyone"}, "visibility"),
        ({"text": "I live in Porto", "content": "I live in Porto"}, "content"),
        ({"text": "I live in \u0000 Porto"}, "text"),
    ]
    for body, field in cases:
        r = await agent.post("/v1/memories:extract", json=body)
        assert r.status_code == 422, (body, r.text)
        err = error_of(r)
        assert err["code"] == "validation_error" and err["field"] == field, (body, err)
    r = await agent.post("/v1/memories:extract", json={"text": "I live in Porto", "visibility": "system"})
    assert r.status_code == 403 and error_of(r)["field"] == "visibility"
    r = await agent.post("/v1/memories:extract", json={"text": "I live in Porto"}, params={"embed": "later"})
    assert r.status_code == 422 and error_of(r)["field"] == "embed"


async def test_nothing_to_extract_is_an_empty_answer(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    r = await agent.post("/v1/memories:extract", json={"text": "ok thanks! bye"})
    assert r.status_code == 200
    assert r.json() | {"candidates": None} == {
        "extractor": "rules", "dry_run": False, "created": 0, "failed": 0, "candidates": None, "dropped": [],
    }  # fmt: skip
    assert r.json()["candidates"] == []
