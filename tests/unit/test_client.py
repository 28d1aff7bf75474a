"""The client's own rules: every route has a method, Retry-After is honoured, only what is safe to resend is
resent, and every error code the API can answer with becomes the library's exception."""

from __future__ import annotations

import email.utils
import subprocess
import sys
import time
from typing import Any

import httpx
import pydantic
import pytest
from fastapi.routing import APIRoute

from engram import errors as e
from engram.api import create_app
from engram.api.errors import STATUS
from engram.client import ROUTES, AsyncClient, Client, Retry
from engram.client._http import error_of, retry_after
from tests.api.test_properties import _api_routes


def test_every_route_has_a_client_method() -> None:
    app = create_app(None, run_worker=False)
    served = {
        f"{method} {route.path}"
        for route in _api_routes(app.routes)
        if isinstance(route, APIRoute) and route.include_in_schema
        for method in route.methods
        if method != "HEAD"
    }
    assert served == set(ROUTES.values()), served ^ set(ROUTES.values())
    for name in ROUTES:
        method = "list" if name == "list_memories" else name
        assert callable(getattr(Client("http://x", "k"), method)) and hasattr(AsyncClient, method)


def test_the_librarys_method_names_work_on_the_clients() -> None:
    """Code written against ``Engram`` keeps its calls on a client: each library name the client lacks is an
    alias of the client's operation for the same route."""
    from engram import Engram

    aliases = {
        "list_keys": "keys", "admission_policy": "policy", "update_admission_policy": "update_policy",
        "receipts_for": "memory_receipts", "lifecycle_policy": "lifecycle", "set_lifecycle_policy": "put_lifecycle",
        "tenant_settings": "tenant", "buffered_turns": "turns",
    }  # fmt: skip
    for cls in (Client, AsyncClient):
        for library, op in aliases.items():
            assert hasattr(Engram, library), library
            assert cls.__dict__[library] is cls.__dict__[op], (cls.__name__, library)
    assert Client("http://x", "k").receipts_for.__name__ == "memory_receipts"


def test_importing_the_client_loads_neither_the_server_nor_the_database_driver() -> None:
    code = (
        "import sys, engram.client; heavy = [m for m in ('engram.service', 'engram.api', 'psycopg', 'torch', "
        "'numpy', 'fastapi', 'engram.store') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after(httpx.Response(503, headers={"Retry-After": "7"})) == 7.0
    later = email.utils.formatdate(1_000_030, usegmt=True)
    assert retry_after(httpx.Response(429, headers={"Retry-After": later}), now=lambda: 1_000_000) == 30.0
    assert retry_after(httpx.Response(503, headers={"Retry-After": "soon"})) is None
    assert retry_after(httpx.Response(503)) is None
    assert Retry(max_wait=2).wait(1, httpx.Response(503, headers={"Retry-After": "120"})) == 2


class Flaky:
    """A server that answers ``statuses`` in turn (then 200), recording each request; ``None`` drops the
    connection."""

    def __init__(self, *statuses: int | None, retry_after: str = "0") -> None:
        self.statuses = list(statuses)
        self.retry_after = retry_after
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        status = self.statuses.pop(0) if self.statuses else 200
        if status is None:
            raise httpx.ConnectError("connection reset", request=request)
        if status == 200:
            return httpx.Response(200, json={"status": "ok", "database": "ok", "embedding_model": None,
                                             "embedding_backlog": 0})  # fmt: skip
        body = {"error": {"code": "throttled" if status == 429 else "store_unavailable", "message": "busy",
                          "field": None}}  # fmt: skip
        return httpx.Response(status, json=body, headers={"Retry-After": self.retry_after})


def test_429_and_503_are_tried_again_after_retry_after() -> None:
    server = Flaky(429, 503, retry_after="1")
    started = time.monotonic()
    with Client("http://engram.test", "k", transport=httpx.MockTransport(server)) as client:
        assert client.health().status == "ok"
    assert len(server.seen) == 3
    assert time.monotonic() - started >= 2.0, "each Retry-After: 1 was waited for"


def test_attempts_are_bounded_and_the_last_error_is_raised() -> None:
    server = Flaky(503, 503, 503, 503, 503)
    with (
        Client(
            "http://engram.test", "k", retry=Retry(attempts=3, backoff=0), transport=httpx.MockTransport(server)
        ) as c,
        pytest.raises(e.StoreUnavailable) as caught,
    ):
        c.health()
    assert len(server.seen) == 3 and caught.value.status == 503  # type: ignore[attr-defined]


def test_a_lost_connection_resends_only_what_is_safe_to_resend() -> None:
    quick = Retry(backoff=0.001)
    server = Flaky(None)
    with Client("http://engram.test", "k", retry=quick, transport=httpx.MockTransport(server)) as c:
        c.health()  # a read: resent
    assert len(server.seen) == 2
    server = Flaky(None)
    client = Client("http://engram.test", "k", retry=quick, transport=httpx.MockTransport(server))
    with client, pytest.raises(e.StoreUnavailable, match="cannot reach"):
        client.remember("No idempotency key: it might be written twice")  # not resent
    assert len(server.seen) == 1
    server = Flaky(None)
    client = Client("http://engram.test", "k", retry=quick, transport=httpx.MockTransport(server))
    # The mock answers the resend with a health body, not a write result: what matters is that it was resent.
    with client, pytest.raises(pydantic.ValidationError):
        client.remember("With one it is safe", external_id="note-1")
    assert len(server.seen) == 2


async def test_the_async_client_retries_the_same_way() -> None:
    server = Flaky(429, retry_after="0")
    async with AsyncClient("http://engram.test", "k", transport=httpx.MockTransport(server)) as client:
        assert (await client.health()).database == "ok"
    assert len(server.seen) == 2 and server.seen[0].headers["authorization"] == "Bearer k"


def _body(code: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": "m", "field": "f", **extra}}


@pytest.mark.parametrize("cls", [cls for cls, _ in STATUS], ids=lambda c: c.__name__)
def test_every_error_class_comes_back_as_itself(cls: type[e.EngramError]) -> None:
    status = next(code for klass, code in STATUS if issubclass(cls, klass))
    exc = error_of(httpx.Response(status, json=_body(cls.code, current_revision=4, existing_id="x", reasons=["r"],
                                                     current_id="y", required_role="admin")))  # fmt: skip
    assert type(exc) is cls and exc.message == "m" and exc.field == "f"


def test_error_details_survive_the_trip() -> None:
    conflict = error_of(httpx.Response(409, json=_body("revision_conflict", current_revision=4)))
    assert isinstance(conflict, e.RevisionConflict) and conflict.current_revision == 4
    rejected = error_of(httpx.Response(422, json=_body("policy_rejected", reasons=["secret"])))
    assert isinstance(rejected, e.PolicyRejection) and rejected.reasons == ["secret"]
    details = [{"field": "content", "message": "x", "type": "t"}]
    invalid = error_of(httpx.Response(422, json=_body("validation_error", details=details)))
    assert isinstance(invalid, e.ValidationError) and invalid.details == details
    big = error_of(httpx.Response(413, json=_body("payload_too_large")))
    assert isinstance(big, e.ValidationError) and big.code == "payload_too_large"
    proxy = error_of(httpx.Response(502, text="<html>bad gateway</html>"))
    assert isinstance(proxy, e.ProviderError) and "bad gateway" in proxy.message
    unknown = error_of(httpx.Response(500, json=_body("internal_error")))
    assert type(unknown) is e.EngramError and unknown.code == "internal_error"
