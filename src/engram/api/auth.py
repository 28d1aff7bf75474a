"""Bearer API keys -> Principal (tenant, role, bound user and agent). The tenant comes only from the key;
what the principal may do is decided by the service."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engram import discovery
from engram.errors import AuthenticationError, PermissionDenied, ValidationError
from engram.model.access import Principal
from engram.model.ids import check_tenant
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
    if creds.credentials.startswith(discovery.TOKEN_PREFIX):
        who = _local_operator(request, creds.credentials)
    else:
        who = await engram.authenticate(creds.credentials)
        claimed = request.headers.get(discovery.TENANT_HEADER)
        if claimed is not None and claimed != who.tenant_id:  # a client that says which tenant it means
            raise PermissionDenied(
                f"this key belongs to tenant {who.tenant_id}, not {claimed}", field=discovery.TENANT_HEADER
            )
    request.state.tenant_id, request.state.key_id = who.tenant_id, str(who.key_id)  # for the access log
    return who


def _local_operator(request: Request, token: str) -> Principal:
    """The CLI on this machine, with the token `engram serve` wrote into its data directory (engram.discovery):
    trusted as it would be in process, for the tenant ``X-Engram-Tenant`` names."""
    expected: str | None = getattr(request.app.state, "local_token", None)
    if expected is None or not hmac.compare_digest(token.encode(), expected.encode()):
        raise AuthenticationError("this local token is not this server's", field="Authorization")
    tenant = request.headers.get(discovery.TENANT_HEADER)
    if not tenant:
        raise ValidationError(
            f"a local token needs the {discovery.TENANT_HEADER} header", field=discovery.TENANT_HEADER
        )
    return Principal.local(check_tenant(tenant), "cli")
