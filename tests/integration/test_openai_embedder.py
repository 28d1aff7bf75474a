"""OpenAIEmbedder and EmbeddingGateway against a real HTTP server speaking the OpenAI embeddings protocol.

The fake server runs ``http.server.ThreadingHTTPServer`` on 127.0.0.1 in a background thread, so every
test goes through real sockets, real HTTP parsing and real timeouts. It is deterministic: the vector for a
text is derived from a hash of the text, so a test can compute what the client must return.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from engram import Engram, ProviderError, ProviderTimeout
from engram.providers.gateway import EmbeddingGateway
from engram.providers.openai import OpenAIEmbedder
from tests.conftest import settings_for

API_KEY = "sk-test-0123456789"
MODEL = "fake-embed-small"
NATIVE_DIMS = 48  # what the fake model returns unless the request asks for fewer ("dimensions")


def raw_vector(text: str, dims: int) -> list[float]:
    """The fake model's (deliberately not unit-length) vector for ``text``: seeded by a hash of the text."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    return [float(x) for x in rng.normal(0.0, 3.0, dims)]


def expected(text: str, dims: int = NATIVE_DIMS) -> np.ndarray[Any, Any]:
    v = np.array(raw_vector(text, dims), dtype=np.float32)
    return v / np.linalg.norm(v)


class FakeOpenAI:
    """State and knobs of the fake server. ``mode`` is one of:

    ok          answer normally (data in *reversed* index order unless ``reverse`` is False)
    error_500   answer 500 with an OpenAI-style error body
    malformed   answer 200 with a truncated JSON body
    slow        sleep ``slow_seconds`` before answering normally
    wrong_dims  answer vectors one dimension short
    bad_index   answer every item with index 0
    """

    def __init__(self) -> None:
        self.mode = "ok"
        self.reverse = True
        self.delay = 0.0  # seconds every request takes (to observe concurrency)
        self.slow_seconds = 5.0
        self.requests: list[dict[str, Any]] = []
        self.sent_indexes: list[list[int]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.stopping = threading.Event()
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, port: int = 0) -> None:
        self.stopping.clear()
        server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()  # cuts short any request sleeping in "slow" mode
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def batch_sizes(self) -> list[int]:
        return [len(r["body"]["input"]) for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
        return None

    def do_POST(self) -> None:
        fake: FakeOpenAI = self.server.fake  # type: ignore[attr-defined]
        with fake.lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            status, payload = self._answer(fake)
        finally:
            # Leave "in flight" before answering: once the client has the answer it may send the next request.
            with fake.lock:
                fake.in_flight -= 1
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    @staticmethod
    def _error(status: int, message: str, code: str) -> tuple[int, Any]:
        kind = "server_error" if status >= 500 else "invalid_request_error"
        return status, {"error": {"message": message, "type": kind, "code": code}}

    def _answer(self, fake: FakeOpenAI) -> tuple[int, Any]:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        auth = self.headers.get("Authorization")
        with fake.lock:
            fake.requests.append({"path": self.path, "authorization": auth, "body": body})
        if fake.delay:
            fake.stopping.wait(fake.delay)
        if self.path != "/v1/embeddings":
            return self._error(404, f"no route {self.path}", "not_found")
        if auth != f"Bearer {API_KEY}":
            return self._error(401, "Incorrect API key provided", "invalid_api_key")
        texts = body.get("input")
        if (
            not isinstance(body.get("model"), str)
            or not isinstance(texts, list)
            or not all(isinstance(t, str) for t in texts)
            or body.get("encoding_format") != "float"
        ):
            return self._error(400, "expected {model, input: [str], encoding_format: float}", "bad_request")
        if fake.mode == "error_500" or any(t.startswith("FAIL") for t in texts):
            return self._error(500, "The model crashed while processing your request", "server_error")
        if fake.mode == "malformed":
            return 200, b'{"object": "list", "data": [{"object": "embedding", "ind'
        if fake.mode == "slow":
            fake.stopping.wait(fake.slow_seconds)
        dims = int(body.get("dimensions", NATIVE_DIMS))
        if fake.mode == "wrong_dims":
            dims -= 1
        data = [
            {"object": "embedding", "index": 0 if fake.mode == "bad_index" else i, "embedding": raw_vector(t, dims)}
            for i, t in enumerate(texts)
        ]
        if fake.reverse:
            data.reverse()
        with fake.lock:
            fake.sent_indexes.append([d["index"] for d in data])
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": body["model"], "usage": usage}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def embedder_for(fake: FakeOpenAI, **kw: Any) -> OpenAIEmbedder:
    args: dict[str, Any] = {"base_url": fake.url, "model": MODEL, "dimensions": NATIVE_DIMS, "api_key": API_KEY}
    return OpenAIEmbedder(**{**args, **kw})


@pytest.fixture
async def embedder(fake: FakeOpenAI) -> AsyncIterator[OpenAIEmbedder]:
    client = embedder_for(fake)
    try:
        yield client
    finally:
        await client.aclose()


TEXTS = [
    "The VPN gateway is vpn.example.org",
    "Invoices go out in EUR",
    "Backups run nightly at 02:00 UTC",
    "Quarterly report due on the 5th",
    "Server room is on floor 3",
]


# --- OpenAIEmbedder ------------------------------------------------------------------------------------


async def test_unit_vectors_in_input_order(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    vectors = await embedder.embed(TEXTS)
    assert fake.sent_indexes == [[4, 3, 2, 1, 0]]  # the server answered out of order ...
    assert len(vectors) == len(TEXTS)
    for text, vec in zip(TEXTS, vectors, strict=True):  # ... and the client put them back in input order
        assert vec.dtype == np.float32
        assert vec.shape == (NATIVE_DIMS,)
        assert np.linalg.norm(vec) == pytest.approx(1.0, abs=1e-5)
        np.testing.assert_allclose(vec, expected(text), atol=1e-6)
    # Deterministic: the same text gives the same vector on every call.
    again = await embedder.embed([TEXTS[2]])
    np.testing.assert_allclose(again[0], vectors[2], atol=1e-7)


async def test_request_follows_the_protocol(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    await embedder.embed(TEXTS[:2])
    (req,) = fake.requests
    assert req["path"] == "/v1/embeddings"
    assert req["authorization"] == f"Bearer {API_KEY}"
    assert req["body"] == {"model": MODEL, "input": TEXTS[:2], "encoding_format": "float"}
    assert "dimensions" not in req["body"]  # not sent unless send_dimensions=True
    assert embedder.model_id == f"openai-compatible/{MODEL}@{NATIVE_DIMS}"
    assert embedder.dimensions == NATIVE_DIMS


async def test_trailing_slash_in_base_url(fake: FakeOpenAI) -> None:
    client = OpenAIEmbedder(base_url=fake.url + "/", model=MODEL, dimensions=NATIVE_DIMS, api_key=API_KEY)
    try:
        assert len(await client.embed(["one"])) == 1
    finally:
        await client.aclose()
    assert fake.requests[0]["path"] == "/v1/embeddings"


async def test_empty_input_sends_nothing(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    assert await embedder.embed([]) == []
    assert fake.requests == []


async def test_dimensions_sent_only_when_asked(fake: FakeOpenAI) -> None:
    short = embedder_for(fake, dimensions=16, send_dimensions=True)
    try:
        vectors = await short.embed(TEXTS[:3])
    finally:
        await short.aclose()
    assert fake.requests[-1]["body"]["dimensions"] == 16
    assert [v.shape for v in vectors] == [(16,)] * 3
    np.testing.assert_allclose(vectors[0], expected(TEXTS[0], 16), atol=1e-6)
    assert short.model_id == f"openai-compatible/{MODEL}@16"

    # Without send_dimensions the model answers its native size, which does not match: a clear error.
    unsent = embedder_for(fake, dimensions=16)
    try:
        with pytest.raises(ProviderError) as info:
            await unsent.embed(TEXTS[:3])
    finally:
        await unsent.aclose()
    assert "dimensions" not in fake.requests[-1]["body"]
    assert "48" in info.value.message and "16" in info.value.message


async def test_wrong_api_key_is_a_provider_error(fake: FakeOpenAI) -> None:
    client = embedder_for(fake, api_key="sk-wrong")
    try:
        with pytest.raises(ProviderError) as info:
            await client.embed(["hello"])
    finally:
        await client.aclose()
    assert not isinstance(info.value, ProviderTimeout)
    assert fake.requests[0]["authorization"] == "Bearer sk-wrong"
    message = info.value.message
    assert "401" in message
    assert "Incorrect API key provided" in message  # the server's own words are passed on
    assert "API key" in message


async def test_no_api_key_sends_no_authorization_header(fake: FakeOpenAI) -> None:
    client = embedder_for(fake, api_key=None)
    try:
        with pytest.raises(ProviderError, match="401"):
            await client.embed(["hello"])
    finally:
        await client.aclose()
    assert fake.requests[0]["authorization"] is None


async def test_server_error_is_a_provider_error(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    fake.mode = "error_500"
    with pytest.raises(ProviderError) as info:
        await embedder.embed(TEXTS)
    assert type(info.value) is ProviderError
    assert "500" in info.value.message
    assert "The model crashed" in info.value.message
    assert info.value.code == "provider_error"


async def test_malformed_json_is_a_provider_error(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    fake.mode = "malformed"
    with pytest.raises(ProviderError) as info:
        await embedder.embed(TEXTS)
    assert type(info.value) is ProviderError
    assert "unexpected body" in info.value.message
    assert '{"object": "list"' in info.value.message  # shows what came back


async def test_wrong_dimensions_is_a_provider_error(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    fake.mode = "wrong_dims"
    with pytest.raises(ProviderError) as info:
        await embedder.embed(TEXTS[:2])
    message = info.value.message
    assert str(NATIVE_DIMS - 1) in message and str(NATIVE_DIMS) in message


async def test_duplicate_indexes_are_rejected(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    fake.mode = "bad_index"
    with pytest.raises(ProviderError, match="index"):
        await embedder.embed(TEXTS[:3])


async def test_slow_server_times_out(fake: FakeOpenAI) -> None:
    fake.mode = "slow"
    client = embedder_for(fake, timeout=0.3)
    started = time.perf_counter()
    try:
        with pytest.raises(ProviderTimeout) as info:
            await client.embed(["hello"])
    finally:
        await client.aclose()
    assert time.perf_counter() - started < 3.0
    assert info.value.code == "provider_timeout"
    assert isinstance(info.value, ProviderError)  # callers that catch ProviderError catch timeouts too
    assert fake.url in info.value.message
    assert "0.3" in info.value.message


async def test_unreachable_server_is_a_provider_error(fake: FakeOpenAI) -> None:
    client = embedder_for(fake)
    fake.stop()
    try:
        with pytest.raises(ProviderError) as info:
            await client.embed(["hello"])
    finally:
        await client.aclose()
    assert not isinstance(info.value, ProviderTimeout)
    assert "unreachable" in info.value.message
    assert fake.url in info.value.message


# --- EmbeddingGateway ----------------------------------------------------------------------------------


async def test_gateway_splits_into_batches(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    gateway = EmbeddingGateway(embedder, batch_size=4, max_concurrency=2, timeout=5)
    texts = [f"note number {i}" for i in range(10)]
    vectors = await gateway.embed(texts)
    assert sorted(fake.batch_sizes()) == [2, 4, 4]
    assert sorted(t for r in fake.requests for t in r["body"]["input"]) == sorted(texts)
    for text, vec in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(vec, expected(text), atol=1e-6)
    assert gateway.calls == 1 and gateway.failures == 0
    assert gateway.model_id == embedder.model_id and gateway.dimensions == NATIVE_DIMS


@pytest.mark.parametrize("limit", [1, 2, 4])
async def test_gateway_bounds_concurrency(fake: FakeOpenAI, embedder: OpenAIEmbedder, limit: int) -> None:
    fake.delay = 0.15
    gateway = EmbeddingGateway(embedder, batch_size=1, max_concurrency=limit, timeout=10)
    texts = [f"text {i}" for i in range(8)]
    vectors = await gateway.embed(texts)
    assert len(fake.requests) == 8
    assert fake.max_in_flight == limit  # never more than the limit, and the limit is actually used
    np.testing.assert_allclose(vectors[5], expected("text 5"), atol=1e-6)


async def test_gateway_timeout(fake: FakeOpenAI) -> None:
    fake.mode = "slow"
    client = embedder_for(fake, timeout=30)  # the client would wait; the gateway does not
    gateway = EmbeddingGateway(client, batch_size=2, timeout=0.3)
    started = time.perf_counter()
    try:
        with pytest.raises(ProviderTimeout) as info:
            await gateway.embed(TEXTS)
    finally:
        await client.aclose()
    assert time.perf_counter() - started < 3.0
    assert "0.3s" in info.value.message and client.model_id in info.value.message
    assert gateway.failures == 1


async def test_gateway_passes_provider_errors_through(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    fake.mode = "error_500"
    gateway = EmbeddingGateway(embedder, batch_size=2)
    with pytest.raises(ProviderError, match="500"):
        await gateway.embed(TEXTS)
    assert gateway.failures == 1


async def test_gateway_failure_cancels_the_remaining_batches(fake: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    gateway = EmbeddingGateway(embedder, batch_size=1, max_concurrency=1, timeout=5)
    with pytest.raises(ProviderError, match="500"):
        await gateway.embed(["FAIL first", "second", "third", "fourth"])
    await asyncio.sleep(0.3)  # give orphaned batches time to show up at the server
    assert len(fake.requests) == 1  # the batches still waiting for a slot were not sent
    # The gateway's slot is free again: the next call works at once.
    assert len(await gateway.embed(["fifth"])) == 1


# --- end to end through Engram -------------------------------------------------------------------------


async def _stored(engram: Engram) -> list[dict[str, Any]]:
    async with engram.db.tenant("acme") as conn:
        return await (
            await conn.execute(
                "SELECT memory_id, model_id, vector_dims(embedding) AS dims, embedding FROM memory_embeddings"
            )
        ).fetchall()


async def test_engram_writes_vectors_from_the_openai_endpoint(fake: FakeOpenAI, database_url: str) -> None:
    embedder = embedder_for(fake)
    engram = await Engram.open(settings_for(database_url), embedder=embedder, tenant="acme")
    try:
        r = await engram.remember("The VPN gateway is vpn.example.org")
        assert r.embedded and r.reasons == ["created"]
        (row,) = await _stored(engram)
        assert row["memory_id"] == r.id
        assert row["model_id"] == embedder.model_id
        assert row["dims"] == NATIVE_DIMS
        np.testing.assert_allclose(
            row["embedding"].to_numpy(), expected("The VPN gateway is vpn.example.org"), atol=1e-6
        )
        async with engram.db.owner() as conn:
            model = await (
                await conn.execute("SELECT dimensions FROM embedding_models WHERE model_id = %s", [embedder.model_id])
            ).fetchone()
        assert model == {"dimensions": NATIVE_DIMS}
    finally:
        await engram.close()


@pytest.mark.parametrize("outage", ["http_500", "server_stopped"])
async def test_outage_defers_and_enrichment_catches_up(fake: FakeOpenAI, database_url: str, outage: str) -> None:
    embedder = embedder_for(fake)
    engram = await Engram.open(settings_for(database_url), embedder=embedder, tenant="acme")
    try:
        if outage == "http_500":
            fake.mode = "error_500"
        else:
            fake.stop()

        r = await engram.remember("Backups run nightly at 02:00 UTC")
        assert r.embedded is False
        assert "embedding_deferred" in r.reasons
        assert (await engram.get(r.id)).content == "Backups run nightly at 02:00 UTC"  # committed anyway
        assert await _stored(engram) == []
        assert await engram.embedding_backlog() == 1
        async with engram.db.tenant("acme") as conn:
            job = await (await conn.execute("SELECT memory_id, model_id, last_error FROM embedding_jobs")).fetchone()
        assert job is not None and job["memory_id"] == r.id and job["model_id"] == embedder.model_id
        assert ("500" if outage == "http_500" else "unreachable") in job["last_error"]

        # Still down: enrichment embeds nothing and the job stays queued.
        assert await engram.enrich_pending() == 0
        assert await engram.embedding_backlog() == 1

        if outage == "http_500":
            fake.mode = "ok"
        else:
            fake.start(port=fake.port)  # back on the same address the client knows
        async with engram.db.tenant("acme") as conn:
            await conn.execute("UPDATE embedding_jobs SET not_before = now()")  # skip the back-off wait
        assert await engram.enrich_pending() == 1
        assert await engram.embedding_backlog() == 0
        (row,) = await _stored(engram)
        assert row["memory_id"] == r.id and row["model_id"] == embedder.model_id
        np.testing.assert_allclose(row["embedding"].to_numpy(), expected("Backups run nightly at 02:00 UTC"), atol=1e-6)
    finally:
        await engram.close()
