"""Bearer API keys -> Principal (tenant, role, bound user and agent). The tenant comes only from the key;
what the principal may do is decided by the service."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engram.errors import AuthenticationError
from engram.model.access import Principal
from engram.service import Engram

_bearer = HTTPBearer(auto_error=False, description="An Engram API key: `engram keys create --tenant T --role R`")


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
    who = await engram.authenticate(creds.credentials)
    request.state.tenant_id, request.state.key_id = who.tenant_id, str(who.key_id)  # for the access log
    return who
