"""The MCP server inside the REST app: streamable HTTP at ``/mcp``, behind the same API keys."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from engram.errors import AuthenticationError
from engram.mcp.server import bearer, build
from engram.service import Engram

PATH = "/mcp"


class KeyRequired:
    """Refuse a request without a valid API key before the MCP session sees it: 401, the API's error body."""

    def __init__(self, inner: ASGIApp, engram_of: Callable[[], Engram]) -> None:
        self.inner, self.engram_of = inner, engram_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        scheme, _, key = headers.get("authorization", "").partition(" ")
        try:
            if scheme.lower() != "bearer" or not key.strip():
                raise AuthenticationError("send an API key as `Authorization: Bearer egm_...`", field="Authorization")
            await self.engram_of().authenticate(key.strip())
        except AuthenticationError as exc:
            body = json.dumps({"error": exc.to_dict()}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        await self.inner(scope, receive, send)


def mount(engram_of: Callable[[], Engram], host: str) -> tuple[Route, Callable[[], AbstractAsyncContextManager[None]]]:
    """The /mcp route for the app's router, and the context its lifespan must run (the MCP sessions)."""
    server = build(engram_of, bearer(engram_of))
    # DNS-rebinding protection (Host and Origin checked) is on when the server listens on a loopback address.
    app = server.streamable_http_app(streamable_http_path=PATH, host=host)
    (route,) = [r for r in app.routes if isinstance(r, Route) and r.path == PATH]

    @asynccontextmanager
    async def sessions() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return Route(PATH, KeyRequired(route.endpoint, engram_of)), sessions
