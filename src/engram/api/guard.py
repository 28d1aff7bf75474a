"""What every request must be before a route sees it, checked on the raw ASGI messages: a body no larger
than the limit (413, before any parsing), JSON when there is a body (415), and a query string and headers
without NUL or lone surrogates (422). Unknown query parameters are refused per route (``known_query``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin
from urllib.parse import unquote_to_bytes

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from engram.errors import ValidationError
from engram.model.rules import text_problem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_WITH_BODY = {"POST", "PUT", "PATCH"}


class RequestGuard:
    """ASGI middleware; the body is read (up to ``max_body_bytes``) before the app runs, and replayed to it."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = _query_problem(scope) or _header_problem(scope)
        if problem is not None:
            await _reply(send, 422, "validation_error", problem[1], problem[0])
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await _reply(send, 413, "payload_too_large", self._too_large(int(declared)), None)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body_bytes:
                await _reply(send, 413, "payload_too_large", self._too_large(None), None)
                return
        content_type = headers.get("content-type", "")
        if body and scope["method"] in _WITH_BODY and not _is_json(content_type) and not _ui_form(scope, content_type):
            await _reply(
                send, 415, "unsupported_media_type",
                f"send the body as JSON with Content-Type: application/json (got {headers.get('content-type')!r})",
                "Content-Type",
            )  # fmt: skip
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self, size: int | None) -> str:
        got = f" ({size} bytes)" if size is not None else ""
        return (
            f"the request body is larger than {self.max_body_bytes} bytes{got} (ENGRAM_MAX_BODY_BYTES): send fewer "
            "items per batch"
        )


def _ui_form(scope: Scope, content_type: str) -> bool:
    """The review UI's forms (the only place the API takes anything but JSON)."""
    form = content_type.split(";", 1)[0].strip().lower() == "application/x-www-form-urlencoded"
    return form and str(scope.get("path", "")).startswith("/ui/")


def _is_json(content_type: str) -> bool:
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (mime.startswith("application/") and mime.endswith("+json"))


def _query_problem(scope: Scope) -> tuple[str, str] | None:
    raw = scope.get("query_string", b"").decode("latin-1")
    for pair in raw.split("&"):
        if not pair:
            continue
        encoded_name, _, encoded_value = pair.partition("=")
        try:
            name = unquote_to_bytes(encoded_name.replace("+", " ")).decode("utf-8")
            value = unquote_to_bytes(encoded_value.replace("+", " ")).decode("utf-8")
        except UnicodeDecodeError:
            return encoded_name, f"query parameter {encoded_name!r} is not UTF-8 text once percent-decoded"
        for part in (name, value):
            if problem := text_problem(part):
                return name, f"query parameter {name!r} {problem}"
    return None


def _header_problem(scope: Scope) -> tuple[str, str] | None:
    for name, value in scope["headers"]:
        if b"\x00" in value or b"\x00" in name:
            header = name.decode("latin-1").title()
            return header, f"header {header} contains a NUL character"
    return None


async def _reply(send: Send, status: int, code: str, message: str, field: str | None) -> None:
    body = json.dumps({"error": {"code": code, "message": message, "field": field}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _route_query(route: APIRoute) -> dict[str, bool]:
    """The query parameters the route takes, and whether each may repeat (worked out once, kept on the
    route)."""
    known: dict[str, bool] | None = getattr(route, "_engram_query", None)
    if known is None:
        known = _query_names(route.dependant)
        route._engram_query = known  # type: ignore[attr-defined]
    return known


def _query_names(dependant: Dependant) -> dict[str, bool]:
    names = {p.alias: _repeats(p.field_info.annotation) for p in dependant.query_params}
    for sub in dependant.dependencies:
        names.update(_query_names(sub))
    return names


def _repeats(annotation: Any) -> bool:
    """Whether a parameter of this type takes several values (``list[str]``, ``list[str] | None``)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _repeats(get_args(annotation)[0])
    if origin in (list, tuple, set, frozenset):
        return True
    return origin in (Union, UnionType) and any(_repeats(a) for a in get_args(annotation))


async def known_query(request: Request) -> None:
    """A dependency of every route: a query parameter the route does not take, or one it takes once given
    twice, is a 422 (a misspelt filter must not silently return everything, nor a repeated one half)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    allowed = _route_query(route)
    for name in request.query_params:
        if name not in allowed:
            choices = ", ".join(sorted(allowed)) or "none"
            raise ValidationError(f"unknown query parameter {name!r}; this route takes: {choices}", field=name)
        if not allowed[name] and len(request.query_params.getlist(name)) > 1:
            raise ValidationError(f"query parameter {name!r} is given more than once; it takes one value", field=name)
