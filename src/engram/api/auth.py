"""Bearer API keys -> Principal (tenant + role). The tenant comes only from the key."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engram.errors import AuthenticationError, PermissionDenied
from engram.service import Engram
from engram.store import keys
from engram.store.keys import Principal

_bearer = HTTPBearer(auto_error=False, description="An Engram API key: `engram keys create --tenant T --role R`")

_CACHE_SECONDS = 10.0


class KeyCache:
    """A short-lived cache so a request costs no key lookup; revocation takes effect within 10 s."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, Principal]] = {}

    def get(self, digest: str) -> Principal | None:
        hit = self._entries.get(digest)
        if hit and hit[0] > time.monotonic():
            return hit[1]
        return None

    def put(self, digest: str, principal: Principal) -> None:
        if len(self._entries) > 10_000:
            self._entries.clear()
        self._entries[digest] = (time.monotonic() + _CACHE_SECONDS, principal)


def get_engram(request: Request) -> Engram:
    engram: Engram = request.app.state.engram
    return engram


async def principal(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    engram: Annotated[Engram, Depends(get_engram)],
) -> Principal:
    if creds is None or creds.scheme.lower() != "bearer":
        raise AuthenticationError("send an API key as `Authorization: Bearer egm_...`", field="Authorization")
    cache: KeyCache = request.app.state.key_cache
    digest = keys.hash_key(creds.credentials)
    found = cache.get(digest)
    if found is None:
        async with engram.db.app() as conn:
            found = await keys.authenticate(conn, creds.credentials)
        if found is None:
            raise AuthenticationError("the API key is unknown or revoked", field="Authorization")
        cache.put(digest, found)
    return found


def require(*roles: str):  # type: ignore[no-untyped-def]
    """A dependency that admits only the given roles."""

    async def check(p: Annotated[Principal, Depends(principal)]) -> Principal:
        if p.role not in roles:
            raise PermissionDenied(f"this needs one of the roles {', '.join(roles)}; the key has {p.role}")
        return p

    return check
