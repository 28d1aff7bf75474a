"""What the sync and async clients share: a request described once (``Call``), its answer parsed into the
library's models, errors raised as the library's exceptions, and when to try again."""

from __future__ import annotations

import email.utils
import importlib
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar

import httpx
from pydantic import TypeAdapter

from engram import errors as e

T = TypeVar("T")
P = ParamSpec("P")

DEFAULT_URL = "http://127.0.0.1:8420"
RETRY_STATUSES = frozenset({429, 503})
MAX_WAIT = 30.0  # seconds: a Retry-After beyond this is capped, not slept through


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and how to read its answer. ``safe``: sending it twice has the effect of sending it
    once (reads, PUTs, deletes, and writes that carry an idempotency key), so it may be resent after a
    connection failure, when the server may or may not have received it."""

    method: str
    path: str
    answer: Any  # what the body becomes: a type, or "module:Name" (see _adapter); None: no body to read
    params: Mapping[str, Any] = field(default_factory=dict)
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    safe: bool = True

    def parse(self, response: httpx.Response) -> T:
        if self.answer is None:
            return None  # type: ignore[return-value]
        if self.answer is str:
            return response.text  # type: ignore[return-value]
        return _adapter(self.answer).validate_json(response.content)  # type: ignore[no-any-return]


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(kind: Any) -> TypeAdapter[Any]:
    """A validator for ``kind``: a type, or ``"module:Name"`` (``"list:module:Name"`` for a list of them),
    imported on first use so that importing the client does not build every model of the API."""
    if kind not in _ADAPTERS:
        target = kind
        if isinstance(kind, str):
            many = kind.startswith("list:")
            module, name = kind.removeprefix("list:").split(":")
            target = getattr(importlib.import_module(module), name)
            target = list[target] if many else target  # type: ignore[valid-type]
        _ADAPTERS[kind] = TypeAdapter(target)
    return _ADAPTERS[kind]


def query(**values: Any) -> dict[str, Any]:
    """Query parameters without the ones left out (None); lists repeat the parameter."""
    return {k: (v if not isinstance(v, uuid.UUID) else str(v)) for k, v in values.items() if v is not None and v != []}


def if_match(revision: int | None) -> dict[str, str]:
    return {} if revision is None else {"If-Match": str(revision)}


# --- errors ----------------------------------------------------------------------------------------------


def _classes() -> dict[str, type[e.EngramError]]:
    found: dict[str, type[e.EngramError]] = {}
    todo: list[type[e.EngramError]] = [e.EngramError]
    while todo:
        cls = todo.pop()
        found.setdefault(cls.code, cls)
        todo += cls.__subclasses__()
    return found


CODES = _classes()
# Codes the HTTP layer answers with that have no class of their own: the class whose meaning they carry.
EXTRA_CODES: dict[str, type[e.EngramError]] = {
    "payload_too_large": e.ValidationError,
    "unsupported_media_type": e.ValidationError,
    "method_not_allowed": e.NotFoundError,
}
BY_STATUS: dict[int, type[e.EngramError]] = {
    401: e.AuthenticationError,
    403: e.PermissionDenied,
    404: e.NotFoundError,
    409: e.ConflictError,
    413: e.ValidationError,
    415: e.ValidationError,
    422: e.ValidationError,
    428: e.PreconditionRequired,
    429: e.Throttled,
    503: e.StoreUnavailable,
    502: e.ProviderError,
}


def error_of(response: httpx.Response) -> e.EngramError:
    """The library's exception for an error answer, with what the body says (field, current revision ...);
    ``status`` and ``request_id`` are set on it too."""
    try:
        body = response.json()
        detail = body["error"] if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    except ValueError:
        detail = {}
    if not detail.get("message"):
        detail = {**detail, "message": f"HTTP {response.status_code}: {response.text[:300]}"}
    exc = error_from(detail, response.status_code, retry_after(response))
    exc.request_id = response.headers.get("x-request-id")  # type: ignore[attr-defined]
    return exc


def error_from(detail: Mapping[str, Any], status: int, wait: float | None = None) -> e.EngramError:
    """The library's exception for an error body's ``error`` object (also each failed item of a batch)."""
    code = str(detail.get("code") or f"http_{status}")
    cls = CODES.get(code) or EXTRA_CODES.get(code) or BY_STATUS.get(status, e.EngramError)
    exc = _build(cls, str(detail.get("message") or code), detail.get("field"), detail, wait)
    if exc.code != code:
        exc.code = code  # the server's own code, even where the class is a broader one
    exc.status = status  # type: ignore[attr-defined]
    return exc


def _build(
    cls: type[e.EngramError], message: str, where: Any, detail: Mapping[str, Any], wait: float | None
) -> e.EngramError:
    if issubclass(cls, e.ValidationError):
        return cls(message, field=where, details=detail.get("details"))
    if issubclass(cls, e.RevisionConflict):
        return cls(message, current_revision=int(detail.get("current_revision") or 0), field=where)
    if issubclass(cls, e.IdempotencyConflict):
        return cls(message, existing_id=str(detail.get("existing_id") or ""), field=where)
    if issubclass(cls, e.NotCurrent):
        return cls(message, current_id=detail.get("current_id"), field=where)
    if issubclass(cls, e.PermissionDenied):
        return cls(message, required_role=detail.get("required_role"), field=where)
    if issubclass(cls, e.PolicyRejection):
        return cls(message, reasons=list(detail.get("reasons") or []), admission=detail.get("admission"), field=where)
    if issubclass(cls, e.Throttled):
        return cls(message, retry_after=max(1, round(wait or 1)), field=where)
    return cls(message, field=where)


# --- retries -----------------------------------------------------------------------------------------------


def retry_after(response: httpx.Response, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asks to wait: ``Retry-After`` as seconds or as an HTTP date; None without one."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


@dataclass(frozen=True)
class Retry:
    """How often and how long to try again: ``attempts`` in all (1: never again); waits grow from
    ``backoff`` seconds, doubled each time, with jitter, unless the server says how long."""

    attempts: int = 4
    backoff: float = 0.25
    max_wait: float = MAX_WAIT

    def wait(self, attempt: int, response: httpx.Response | None) -> float:
        asked = retry_after(response) if response is not None else None
        if asked is not None:
            return min(asked, self.max_wait)
        return float(min(self.backoff * 2 ** (attempt - 1) * (0.5 + random.random()), self.max_wait))  # noqa: S311

    def again(self, call: Call[Any], attempt: int, response: httpx.Response | None) -> bool:
        """Whether to send ``call`` again after ``attempt`` attempts ended with ``response`` (None: no answer)."""
        if attempt >= self.attempts:
            return False
        if response is None:
            return call.safe
        # 429 and 503 are answered before anything is written (throttled, or the store refused the work).
        return response.status_code in RETRY_STATUSES


def headers_for(key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    from engram import __version__

    headers = {"User-Agent": f"engram-client/{__version__}", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    headers.update(extra or {})
    return headers
