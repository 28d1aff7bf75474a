"""What an operator watches: GET /metrics (Prometheus text, no tenant, user or query in any label), request ids
on every answer, and one JSON access-log line per request naming the route template, status and tenant."""

from __future__ import annotations

import json
import logging
import re

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engram import Engram
from engram.api import create_app
from engram.observability.logs import JsonFormatter
from tests.api.conftest import MakeClient
from tests.conftest import settings_for


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


async def test_metrics_count_requests_writes_recalls_and_queues_without_tenant_labels(
    engram: Engram, make_client: MakeClient
) -> None:
    client = await make_client(user_id="u-private-4711")
    anon = httpx.AsyncClient(transport=client._transport, base_url="http://engram.test")
    before = (await anon.get("/metrics")).text
    assert (
        await client.post("/v1/memories", json={"content": "Invoices go out in EUR zebraquokka"})
    ).status_code == 201
    recalled = await client.post("/v1/recall", json={"query": "which currency zebraquokka"})
    assert recalled.status_code == 200 and recalled.json()["items"]
    stranger = await make_client(user_id="u-nobody")  # a user with no memory at all: an empty recall
    nothing = await stranger.post("/v1/recall", json={"query": "which currency zebraquokka"})
    assert nothing.status_code == 200 and nothing.json()["items"] == []
    empty_reason = nothing.json()["empty_reason"]
    act = await client.post(
        "/v1/actions", json={"idempotency_key": "k1", "url": "http://127.0.0.1:9/hook", "payload": {}}
    )
    assert act.status_code == 201, act.text
    page = await anon.get("/metrics")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    after = page.text
    post = {"method": "POST", "route": "/v1/memories", "status": "201"}
    assert value(after, "engram_http_requests_total", **post) == value(before, "engram_http_requests_total", **post) + 1
    assert value(after, "engram_memories_written_total", status="active") >= 1
    plan = recalled.json()["plan"]["name"] if recalled.json()["plan"] else "none"
    assert value(after, "engram_recall_duration_seconds_count", plan=plan) >= 1
    assert value(after, "engram_recall_candidates_count", retriever="lexical") >= 1
    assert value(after, "engram_embedding_duration_seconds_count", model=engram.model_id) >= 1
    assert value(after, "engram_queue_depth", queue="outbox") == 1
    assert value(after, "engram_queue_oldest_age_seconds", queue="outbox") >= 0
    assert ("engram_queue_depth", (("queue", "embedding"),)) in samples(after)
    empty = {"reason": empty_reason}
    assert value(after, "engram_recall_empty_total", **empty) == value(before, "engram_recall_empty_total", **empty) + 1
    # Labels are routes, plans, retrievers and outcomes: never the tenant, the user, an id or the query.
    for private in ("acme", "u-private-4711", "zebraquokka", recalled.json()["receipt_id"]):
        assert private not in after
    await anon.aclose()


async def test_every_answer_carries_a_request_id(client: httpx.AsyncClient) -> None:
    made = await client.get("/v1/memories")
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
    kept = await client.get("/v1/memories", headers={"X-Request-ID": "lb-7f3a.2"})
    assert kept.headers["x-request-id"] == "lb-7f3a.2"
    for bad in ("two words", "x" * 129, 'quote"d'):
        replaced = await client.get("/v1/memories", headers={"X-Request-ID": bad})
        assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["x-request-id"])
    refused = await client.post("/v1/memories", content=b"x" * 10, headers={"content-type": "text/plain"})
    assert refused.status_code == 415 and refused.headers["x-request-id"]  # the guard's answers too


async def test_access_log_is_one_json_line_per_request(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="engram.access"):
        r = await client.get("/v1/memories/00000000-0000-7000-8000-000000000000")
    assert r.status_code == 404
    (record,) = [rec for rec in caplog.records if rec.name == "engram.access"]
    line = json.loads(JsonFormatter().format(record))
    assert line["route"] == "/v1/memories/{memory_id}" and line["status"] == 404 and line["method"] == "GET"
    assert line["tenant_id"] == "acme" and line["request_id"] == r.headers["x-request-id"]
    assert line["duration_ms"] >= 0 and line["level"] == "info"


async def test_metrics_can_be_turned_off(database_url: str) -> None:
    from engram import HashingEmbedder

    mem = await Engram.open(settings_for(database_url), embedder=HashingEmbedder(), tenant="acme")
    try:
        app = create_app(mem, settings_for(database_url, metrics=False), run_worker=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as anon:
            assert (await anon.get("/metrics")).status_code == 404
    finally:
        await mem.close()
