"""Signed-in reviewers: a random session id in an HttpOnly, SameSite=Strict cookie; the API key it stands for
stays in this process (never in the browser after sign-in). A session ends on sign-out, after ``TTL``, or
when its key is revoked (each request authenticates the key again, cached 10 s)."""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

COOKIE = "engram_ui"
TTL = 12 * 3600.0
MAX_SESSIONS = 10_000  # oldest dropped beyond this: sign-ins cannot grow memory without bound


@dataclass
class Session:
    key: str
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    started: float = field(default_factory=time.monotonic)

    def fresh(self) -> bool:
        return time.monotonic() - self.started < TTL

    def csrf_ok(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token.encode(), self.csrf.encode())


class Sessions:
    def __init__(self) -> None:
        self._by_id: dict[str, Session] = {}

    def start(self, key: str) -> tuple[str, Session]:
        if len(self._by_id) >= MAX_SESSIONS:
            self._by_id.pop(next(iter(self._by_id)))
        sid = secrets.token_urlsafe(32)
        self._by_id[sid] = Session(key)
        return sid, self._by_id[sid]

    def get(self, sid: str | None) -> Session | None:
        found = self._by_id.get(sid or "")
        if found is not None and not found.fresh():
            self._by_id.pop(sid or "", None)
            return None
        return found

    def end(self, sid: str | None) -> None:
        self._by_id.pop(sid or "", None)
