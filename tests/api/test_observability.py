"""What an operator watches: GET /metrics (Prometheus text, no tenant, user or query in any label), request ids
on every answer, and one JSON access-log line per request naming the route template, status and tenant."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


async def test_traces_nest_writes_recalls_and_embeddings_in_the_request_span(
    client: httpx.AsyncClient,
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from engram.observability import tracing

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    tracing.use(provider)
    try:
        caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        r = await client.post(
            "/v1/recall", json={"query": "anything about invoices"},
            headers={"traceparent": f"00-{caller_trace}-00f067aa0ba902b7-01"},
        )  # fmt: skip
        assert r.status_code == 200
        await client.post("/v1/memories", json={"content": "Invoices go out in EUR"})
    finally:
        tracing.use(None)
    spans = {s.name: s for s in exported.get_finished_spans()}
    server = spans["POST /v1/recall"]
    assert format(server.context.trace_id, "032x") == caller_trace  # the caller's trace goes on
    assert server.attributes["http.route"] == "/v1/recall" and server.attributes["http.response.status_code"] == 200
    assert server.attributes["engram.request_id"] == r.headers["x-request-id"]
    recall = spans["engram.recall"]
    assert recall.parent is not None and recall.parent.span_id == server.context.span_id
    embeds = [s for s in exported.get_finished_spans() if s.name == "engram.embed"]
    assert any(s.parent is not None and s.parent.span_id == recall.context.span_id for s in embeds)
    write = spans["engram.write"]
    assert write.parent is not None and write.parent.span_id == spans["POST /v1/memories"].context.span_id


def test_tracing_is_off_unless_configured(monkeypatch: pytest.MonkeyPatch, database_url: str) -> None:
    from engram.observability import tracing

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert tracing.configure(settings_for(database_url)) is False


def test_a_configured_endpoint_receives_the_spans_over_otlp(tmp_path: Path) -> None:
    """In a process of its own (the global tracer provider is set once per process): configure, make a
    span, and a real local HTTP server receives it at /v1/traces as OTLP protobuf."""
    received: list[tuple[str, str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(
                (self.path, self.headers["Content-Type"], self.rfile.read(int(self.headers["Content-Length"])))
            )
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    script = (
        "from engram.config import Settings\n"
        "from engram.observability import tracing\n"
        "from opentelemetry import trace\n"
        f"assert tracing.configure(Settings(otel_endpoint='http://127.0.0.1:{server.server_address[1]}',"
        " otel_service_name='engram-test'))\n"
        "with tracing.tracer().start_as_current_span('engram.recall'):\n"
        "    pass\n"
        "trace.get_tracer_provider().force_flush()\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    assert received and received[0][0] == "/v1/traces" and received[0][1] == "application/x-protobuf"
    assert b"engram.recall" in received[0][2] and b"engram-test" in received[0][2]
