"""Hostile and careless input over REST: every case is a 4xx naming the field, never a 500, never a row
that breaks later reads. The cases the hostile review found are regression tests here."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from engram import Engram
from engram.api import create_app
from tests.api.conftest import MakeClient, error_of


async def still_readable(client: httpx.AsyncClient) -> None:
    """The tenant's reads still work: nothing poisoned was stored."""
    assert (await client.get("/v1/memories")).status_code == 200
    assert (await client.post("/v1/recall", json={"query": "anything at all"})).status_code == 200


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("valid_from", "0001-01-01T00:00:00+14:00"),  # a BC date in UTC
        ("valid_from", "9999-12-31T23:59:59-14:00"),  # year 10000 in UTC
        ("expires_at", "9999-12-31T23:59:59-01:00"),
        ("valid_from", "2024-05-01T10:00:00+16:00"),  # an offset PostgreSQL refuses
        ("valid_until", "2024-05-01T10:00:00-18:30"),
        ("valid_from", "10000-01-01T00:00:00Z"),
    ],
)
async def test_times_that_could_not_be_read_back_are_refused(client: httpx.AsyncClient, field: str, value: str) -> None:
    r = await client.post("/v1/memories", json={"content": "Contract signed", field: value})
    assert r.status_code == 422, r.text
    assert error_of(r)["field"] == field
    await still_readable(client)
    as_of = await client.post("/v1/recall", json={"query": "contract", "as_of": value})
    assert as_of.status_code == 422 and error_of(as_of)["field"] == "as_of"


async def test_times_at_the_edges_of_the_range_are_stored_and_read_back(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/v1/memories",
        json={"content": "Ancient fact", "valid_from": "0001-01-01T00:00:00Z", "expires_at": "9999-12-31T23:59:59Z"},
    )
    assert r.status_code == 201, r.text
    got = (await client.get(f"/v1/memories/{r.json()['id']}")).json()
    assert got["valid_from"].startswith("0001-01-01") and got["expires_at"].startswith("9999-12-31")
    offset = await client.post(
        "/v1/memories", json={"content": "Kiribati time", "valid_from": "2024-05-01T10:00:00+14:00"}
    )
    assert (
        (await client.get(f"/v1/memories/{offset.json()['id']}")).json()["valid_from"].startswith("2024-04-30T20:00:00")
    )
    await still_readable(client)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "nul \u0000 inside"}, "content"),
        ({"content": "ok", "summary": "\u0000"}, "summary"),
        ({"content": "ok", "tags": ["fine", "bad\u0000"]}, "tags[1]"),
        ({"content": "ok", "metadata": {"k\u0000": 1}}, "metadata"),
        ({"content": "ok", "metadata": {"k": ["x", {"y": "v\u0000"}]}}, "metadata"),
        ({"content": "ok", "source": {"type": "document", "ref": "file://a\u0000b"}}, "source.ref"),
        ({"content": "ok", "external_id": "e\u0000"}, "external_id"),
        ({"content": "ok", "user_id": "u\u0000"}, "user_id"),
        ({"content": "ok", "policy": {"retention_reason": "law\u0000"}}, "policy.retention_reason"),
    ],
)
async def test_nul_anywhere_in_a_memory_is_a_422(client: httpx.AsyncClient, body: dict[str, Any], field: str) -> None:
    r = await client.post("/v1/memories", json=body)
    assert r.status_code == 422, r.text
    assert error_of(r)["field"] == field


async def test_lone_surrogates_are_a_422(client: httpx.AsyncClient) -> None:
    for raw in (
        b'{"content": "bad \\ud800 text"}',
        b'{"content": "ok", "metadata": {"\\udfff": 1}}',
        b'{"content": "ok", "tags": ["\\udc00"]}',
    ):
        r = await client.post("/v1/memories", content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 422, (raw, r.text)
        assert "surrogate" in error_of(r)["message"] or "unicode" in error_of(r)["message"]
    recall = await client.post(
        "/v1/recall", content=b'{"query": "hi \\ud83d"}', headers={"Content-Type": "application/json"}
    )
    assert recall.status_code == 422 and error_of(recall)["field"] == "query"
    await still_readable(client)


async def test_nul_in_query_parameters_and_headers(client: httpx.AsyncClient, engram: Engram) -> None:
    r = await client.get("/v1/memories", params={"user_id": "u\u0000"})
    assert r.status_code == 422 and error_of(r)["field"] == "user_id"
    r = await client.get("/v1/memories", params={"tag": "\u0000"})
    assert r.status_code == 422 and error_of(r)["field"] == "tag"
    # httpx will not send a NUL in a header: speak ASGI directly.
    app = create_app(engram, run_worker=False)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": "/v1/memories", "raw_path": b"/v1/memories", "query_string": b"", "root_path": "",
        "headers": [(b"host", b"t"), (b"if-match", b"1\x00")], "server": ("t", 80), "client": ("c", 1),
    }  # fmt: skip
    await app(scope, receive, send)
    assert sent[0]["status"] == 422
    assert json.loads(sent[1]["body"])["error"]["field"] == "If-Match"


async def test_if_match_must_be_ascii_digits(client: httpx.AsyncClient) -> None:
    mid = (await client.post("/v1/memories", json={"content": "Lunch is at noon"})).json()["id"]
    for value in ("²", "١", "1.0", "-1", "0", "99999999999999999999", "abc"):  # noqa: RUF001 - a digit that is not ASCII, on purpose
        headers = {"If-Match": value.encode()}  # as raw bytes: httpx sends only ASCII header strings
        r = await client.patch(f"/v1/memories/{mid}", json={"importance": 0.2}, headers=headers)
        assert r.status_code == 422, (value, r.text)
        assert error_of(r)["field"] == "If-Match"
    ok = await client.patch(f"/v1/memories/{mid}", json={"importance": 0.2}, headers={"If-Match": 'W/"1"'})
    assert ok.status_code == 200


async def test_a_misspelt_filter_is_a_422_not_everything(client: httpx.AsyncClient) -> None:
    await client.post("/v1/memories", json={"content": "somebody's note", "user_id": "u1"})
    r = await client.get("/v1/memories", params={"userid": "nobody"})
    assert r.status_code == 422 and error_of(r)["field"] == "userid"
    assert "user_id" in error_of(r)["message"]
    r = await client.post("/v1/recall", params={"dry_run": "1"}, json={"query": "x"})
    assert r.status_code == 422 and error_of(r)["field"] == "dry_run"


async def test_a_body_that_is_not_json_is_a_415(client: httpx.AsyncClient) -> None:
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        r = await client.post(
            "/v1/memories", content=b'{"content": "hello from a JSON body"}', headers={"Content-Type": ctype}
        )
        assert r.status_code == 415 and error_of(r)["field"] == "Content-Type", ctype
    ok = await client.post(
        "/v1/memories",
        content=b'{"content": "hello from a JSON body"}',
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert ok.status_code == 201


async def test_a_body_over_the_limit_is_a_413_before_it_is_parsed(engram: Engram) -> None:
    made = await engram.create_key({"role": "agent"}, tenant="acme")
    app = create_app(engram, run_worker=False, max_body_bytes=4096)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", headers={"Authorization": f"Bearer {made.key}"}
    ) as client:
        big = json.dumps({"content": "x" * 5000}).encode()
        r = await client.post("/v1/memories", content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and error_of(r)["code"] == "payload_too_large"

        async def chunks() -> Any:  # no Content-Length: counted as it arrives
            for _ in range(10):
                yield b" " * 1000
            yield b'{"content": "late"}'

        r = await client.post("/v1/memories", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        assert (await client.post("/v1/memories", json={"content": "small"})).status_code == 201


async def test_every_list_and_map_is_bounded(client: httpx.AsyncClient) -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(10):
        deep = {"d": deep}
    cases = [
        ("/v1/memories", {"content": "x", "metadata": deep}, "metadata"),
        ("/v1/memories", {"content": "x", "metadata": {"blob": "y" * 20_000}}, "metadata"),
        ("/v1/memories", {"content": "x", "tags": [f"t{i}" for i in range(65)]}, "tags"),
        ("/v1/recall", {"query": "x", "kinds": ["semantic"] * 5}, "kinds"),
        ("/v1/recall", {"query": "x", "metadata": {"blob": "y" * 20_000}}, "metadata"),
        ("/v1/recall", {"query": "x", "metadata": deep}, "metadata"),
        ("/v1/recall", {"query": "x", "tags": ["t"] * 65}, "tags"),
        ("/v1/recall", {"query": "x" * 4001}, "query"),
    ]
    for path, body, field in cases:
        r = await client.post(path, json=body)
        assert r.status_code == 422, (path, field, r.text)
        assert error_of(r)["field"] == field
    a = (await client.post("/v1/memories", json={"content": "one"})).json()["id"]
    b = (await client.post("/v1/memories", json={"content": "two"})).json()["id"]
    r = await client.post("/v1/relations", json={"src_id": a, "dst_id": b, "type": "about", "metadata": deep})
    assert r.status_code == 422 and error_of(r)["field"] == "metadata"
    r = await client.post(
        "/v1/relations", json={"src_id": a, "dst_id": b, "type": "about", "metadata": {"x": "y" * 20_000}}
    )
    assert r.status_code == 422 and error_of(r)["field"] == "metadata"
    nan = await client.post(
        "/v1/memories",
        content=b'{"content": "x", "metadata": {"n": NaN}}',
        headers={"Content-Type": "application/json"},
    )
    assert nan.status_code == 422 and error_of(nan)["field"] == "metadata"


async def test_a_bad_item_fails_alone_in_a_batch(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/v1/memories:batch",
        json={
            "items": [
                {"content": "first"},
                {"content": "bad \u0000"},
                {"content": "third", "valid_from": "0001-01-01T00:00:00+14:00"},
                {"content": "fourth"},
            ]
        },
    )
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["ok"] for x in results] == [True, False, False, True]
    assert results[1]["error"]["field"] == "items[1].content"
    assert results[2]["error"]["field"] == "items[2].valid_from"
    listed = {m["content"] for m in (await client.get("/v1/memories")).json()["items"]}
    assert listed == {"first", "fourth"}


async def test_an_item_the_database_refuses_fails_alone(client: httpx.AsyncClient, engram: Engram) -> None:
    """A refusal only the database knows of (here a trigger standing in for any constraint) costs its item,
    not the batch, and names the field when the database does."""
    async with engram.db.owner() as conn:
        await conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " IF NEW.content = 'refused by the database' THEN RAISE check_violation USING"
            " CONSTRAINT = 'memories_metadata_size', MESSAGE = 'refused'; END IF; RETURN NEW; END $$"
        )
        await conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION refuse()")
    r = await client.post(
        "/v1/memories:batch",
        json={"items": [{"content": "kept one"}, {"content": "refused by the database"}, {"content": "kept two"}]},
    )
    results = r.json()["results"]
    assert [x["ok"] for x in results] == [True, False, True], results
    assert results[1]["error"] == {**results[1]["error"], "code": "validation_error", "field": "items[1].metadata"}
    single = await client.post("/v1/memories", json={"content": "refused by the database"})
    assert single.status_code == 422 and error_of(single)["field"] == "metadata"


async def test_every_error_is_json_and_there_are_no_redirects(client: httpx.AsyncClient) -> None:
    nowhere = await client.get("/v2/anything")
    assert nowhere.status_code == 404 and error_of(nowhere)["code"] == "not_found"
    slash = await client.get("/v1/memories/")
    assert slash.status_code == 404 and "location" not in slash.headers
    assert error_of(slash)["code"] == "not_found"
    wrong = await client.put("/v1/memories")
    assert wrong.status_code == 405 and error_of(wrong)["code"] == "method_not_allowed"
    assert wrong.headers["allow"]
    bad_id = await client.get("/v1/memories/not-a-uuid")
    assert bad_id.status_code == 422 and error_of(bad_id)["field"] == "memory_id"
    not_json = await client.post("/v1/memories", content=b"{", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 422 and "JSON" in error_of(not_json)["message"]


async def test_an_immutable_field_is_named(client: httpx.AsyncClient) -> None:
    mid = (await client.post("/v1/memories", json={"content": "Owner is Dana", "user_id": "u1"})).json()["id"]
    for field in ("user_id", "agent_id", "workflow_id", "session_id", "external_id", "fact_key"):
        r = await client.patch(
            f"/v1/memories/{mid}", params={"user_id": "u1"}, json={field: "x"}, headers={"If-Match": "1"}
        )
        err = error_of(r)
        assert r.status_code == 422 and err["field"] == field
        assert err["message"] == f"{field} cannot be changed: write a new memory"
    status = await client.patch(
        f"/v1/memories/{mid}", params={"user_id": "u1"}, json={"status": "active"}, headers={"If-Match": "1"}
    )
    assert status.status_code == 422 and "archive" in error_of(status)["message"]


async def test_values_come_back_as_sent(client: httpx.AsyncClient, make_client: MakeClient) -> None:
    r = await client.post("/v1/memories", json={"content": "Budget is fixed", "confidence": 0.8, "importance": 0.3})
    got = (await client.get(f"/v1/memories/{r.json()['id']}")).json()
    assert (got["confidence"], got["importance"]) == (0.8, 0.3)
    history = (await client.get(f"/v1/memories/{r.json()['id']}/history")).json()
    assert set(history[0]["snapshot"]) == set(got)  # a snapshot has the shape of a memory
    assert history[0]["snapshot"]["confidence"] == 0.8 and history[0]["snapshot"]["source"]["type"] == "user_message"
    missing = await client.get("/v1/memories/0190a0a0-0000-7000-8000-000000000000/receipts")
    assert missing.status_code == 404 and error_of(missing)["field"] == "id"


async def test_the_default_limit_refuses_a_huge_body_unread(client: httpx.AsyncClient) -> None:
    """The review's cases: a 50 MB body was parsed whole; a 20 MB relation was stored."""
    huge = b'{"content": "' + b"x" * (50 * 1024 * 1024) + b'"}'
    r = await client.post("/v1/memories", content=huge, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and error_of(r)["code"] == "payload_too_large"
    a = (await client.post("/v1/memories", json={"content": "one"})).json()["id"]
    b = (await client.post("/v1/memories", json={"content": "two"})).json()["id"]
    relation = {"src_id": a, "dst_id": b, "type": "about", "metadata": {"x": "y" * (20 * 1024 * 1024)}}
    assert (await client.post("/v1/relations", json=relation)).status_code == 413
    recall = {"query": "x", "metadata": {"x": "y" * (20 * 1024 * 1024)}}
    assert (await client.post("/v1/recall", json=recall)).status_code == 413


async def test_a_body_json_cannot_read_is_a_422_like_any_bad_json(client: httpx.AsyncClient) -> None:
    for raw in (b'{"content": "\xff\xfe"}', b"[" * 100_000, b'{"confidence": 1' + b"0" * 5000 + b"}"):
        r = await client.post("/v1/memories", content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 422, (raw[:20], r.text)
        assert error_of(r)["code"] == "validation_error" and error_of(r)["field"] == "body"


async def test_the_published_patch_schema_refuses_null_where_the_server_does(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()["components"]["schemas"]["MemoryPatch"]["properties"]
    for field in ("content", "kind", "visibility", "source", "confidence", "importance", "valid_from", "tags"):
        assert "null" not in json.dumps(schema[field]["type"] if "type" in schema[field] else schema[field]), field
    assert {"type": "null"} in schema["summary"]["anyOf"]  # summary may be cleared


async def test_integers_beyond_64_bits_are_refused_not_dropped_later(client: httpx.AsyncClient) -> None:
    """A recall filter with such a number answered 200 with a receipt id whose receipt was then refused."""
    big = {"n": 2**64}
    r = await client.post("/v1/recall", json={"query": "anything", "metadata": big})
    assert r.status_code == 422 and error_of(r)["field"] == "metadata"
    r = await client.post("/v1/memories", json={"content": "x", "metadata": big})
    assert r.status_code == 422 and error_of(r)["field"] == "metadata"
    fine = await client.post("/v1/recall", json={"query": "anything", "metadata": {"n": 2**63 - 1}})
    assert fine.status_code == 200
    assert (await client.get(f"/v1/receipts/{fine.json()['receipt_id']}")).status_code == 200


async def test_the_reviews_smaller_findings(client: httpx.AsyncClient) -> None:
    # A batch item that is not even an object fails alone.
    r = await client.post("/v1/memories:batch", json={"items": [{"content": "kept"}, "not an object", 7]})
    assert r.status_code == 200 and [x["ok"] for x in r.json()["results"]] == [True, False, False]
    assert r.json()["results"][1]["error"]["field"] == "items[1]"
    # If-Match is 3, "3" or W/"3", nothing looser.
    mid = (await client.post("/v1/memories", json={"content": "Standup at nine"})).json()["id"]
    for value in ('"1', '1"', '"""1', "01", 'W/"01"'):
        bad = await client.patch(f"/v1/memories/{mid}", json={"importance": 0.4}, headers={"If-Match": value})
        assert bad.status_code == 422, value
    shown = await client.patch(f"/v1/memories/{mid}", json={"importance": 0.4}, headers={"If-Match": "²".encode()})
    assert "'²'" in error_of(shown)["message"]  # as the client wrote it, not as Latin-1 mojibake
    # Query strings: UTF-8 only, and one value for a parameter that takes one.
    for query in ("user_id=%FF", "user_id=%ED%A0%80"):
        r = await client.get(f"/v1/memories?{query}")
        assert r.status_code == 422 and error_of(r)["field"] == "user_id", query
    twice = await client.get("/v1/memories?user_id=u1&user_id=u2")
    assert twice.status_code == 422 and error_of(twice)["field"] == "user_id"
    assert (await client.get("/v1/memories?tag=a&tag=b")).status_code == 200  # tag repeats by design
    assert (await client.get("/v1/memories", params={"fact_key": "a b"})).status_code == 422
    # Content of invisible characters only is empty content.
    for content in ("\ufeff", "\u200b\u200b", " \u2060 "):
        r = await client.post("/v1/memories", json={"content": content})
        assert r.status_code == 422 and error_of(r)["field"] == "content", repr(content)
    # A time is an ISO 8601 string: a number of seconds or milliseconds would be a guess.
    for value in (-62135596801, 1700000000, "1700000000", 1.7e12):
        r = await client.post("/v1/memories", json={"content": "dated", "valid_from": value})
        assert r.status_code == 422 and error_of(r)["field"] == "valid_from", value


async def test_a_refused_receipt_takes_as_long_as_a_missing_one(make_client: MakeClient) -> None:
    agent = await make_client(role="agent")
    await agent.post("/v1/memories", json={"content": "Lunch is at noon", "visibility": "tenant"})
    rid = (await agent.post("/v1/recall", json={"query": "lunch", "user_id": "alice"})).json()["receipt_id"]
    started = time.perf_counter()
    assert (await agent.get(f"/v1/receipts/{rid}", params={"user_id": "bob"})).status_code == 404
    assert time.perf_counter() - started > 1.0  # as long as an id that is not there, just issued
