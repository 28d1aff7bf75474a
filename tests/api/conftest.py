from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from engram import Engram
from engram.api import create_app

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def make_client(engram: Engram) -> AsyncIterator[MakeClient]:
    """Clients authenticated with a fresh key for a tenant and role."""
    app = create_app(engram, run_worker=False)
    clients: list[httpx.AsyncClient] = []

    async def make(tenant: str = "acme", role: str = "agent", **binding: str) -> httpx.AsyncClient:
        made = await engram.create_key({"role": role, "name": "test", **binding}, tenant=tenant)
        key = made.key
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://engram.test",
            headers={"Authorization": f"Bearer {key}"},
        )
        clients.append(client)
        return client

    yield make
    for c in clients:
        await c.aclose()


@pytest.fixture
async def client(make_client: MakeClient) -> httpx.AsyncClient:
    return await make_client()


def error_of(r: httpx.Response) -> dict[str, Any]:
    """The error of a JSON error answer, which always has a code, a message and a field."""
    assert r.headers["content-type"].startswith("application/json"), r.text
    body = r.json()
    assert set(body) == {"error"} and {"code", "message", "field"} <= set(body["error"]), body
    return body["error"]  # type: ignore[no-any-return]
