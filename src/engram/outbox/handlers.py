"""Who carries actions out: a small interface, the built-in webhook, and a registry for more.

A handler gets the action (its idempotency key included) and answers with an ``Outcome``: done, or failed
and whether trying again may help. It must pass the key on, so that a receiver that sees the same action
twice (a worker killed after sending, before recording) applies it once.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from engram.outbox.targets import Targets

MAX_BODY_KEPT = 2000  # characters of a receiver's answer kept in the action's result


@dataclass(frozen=True)
class Dispatch:
    """One attempt at one action."""

    tenant_id: str
    action_id: uuid.UUID
    idempotency_key: str
    handler: str
    url: str | None
    payload: dict[str, Any]
    attempt: int


@dataclass(frozen=True)
class Outcome:
    ok: bool
    retryable: bool = True  # a failure worth trying again (a timeout, a 5xx), not a refusal (a 4xx)
    detail: dict[str, Any] = field(default_factory=dict)  # kept as the action's result
    error: str | None = None
    retry_after: float | None = None  # seconds the receiver asked for


class Handler(Protocol):
    name: str

    async def dispatch(self, action: Dispatch) -> Outcome: ...

    async def aclose(self) -> None: ...


class Webhook:
    """POST the payload as JSON to the action's URL with its key as ``Idempotency-Key``. 2xx is done; 408,
    425, 429 and 5xx (and no answer) are retried; any other status is a refusal, dead at once."""

    name = "webhook"

    def __init__(
        self, timeout: float = 10.0, client: httpx.AsyncClient | None = None, targets: Targets | None = None
    ) -> None:
        self._client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self.targets = targets or Targets()

    async def dispatch(self, action: Dispatch) -> Outcome:
        if action.url is None:
            return Outcome(False, retryable=False, error="a webhook action needs a url")
        refused = await self.targets.check_before_sending(action.url)
        if refused is not None:  # the operator's rule, not a passing failure: dead at once
            return Outcome(False, retryable=False, error=f"not sent: {refused}")
        headers = {
            "Idempotency-Key": action.idempotency_key,
            "X-Engram-Action-Id": str(action.action_id),
            "X-Engram-Attempt": str(action.attempt),
            "User-Agent": "engram-outbox",
        }
        try:
            r = await self._client.post(action.url, content=json.dumps(action.payload), headers={
                **headers, "Content-Type": "application/json"})  # fmt: skip
        except httpx.HTTPError as exc:
            return Outcome(False, error=f"{type(exc).__name__}: {exc}"[:500] or type(exc).__name__)
        detail = {"status_code": r.status_code, "body": r.text[:MAX_BODY_KEPT]}
        if r.is_success:
            return Outcome(True, detail=detail)
        retryable = r.status_code in (408, 425, 429) or r.status_code >= 500
        return Outcome(
            False, retryable=retryable, detail=detail, error=f"{action.url} answered {r.status_code}",
            retry_after=_seconds(r.headers.get("Retry-After")),
        )  # fmt: skip

    async def aclose(self) -> None:
        await self._client.aclose()


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the backoff decides


def builtin(targets: Targets | None = None) -> dict[str, Handler]:
    return {"webhook": Webhook(targets=targets)}
