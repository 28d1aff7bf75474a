"""Administration as service operations: API keys (and the principal a key stands for), tenant settings."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from engram.errors import AuthenticationError, NotFoundError
from engram.model.access import Action, ApiKey, KeyInput, NewKey, Principal
from engram.model.ids import parse_uuid
from engram.model.tenant import TenantPatch, TenantSettings
from engram.store import keys, tenants

if TYPE_CHECKING:
    from engram.service.engram import Engram

CACHE_SECONDS = 10.0  # a revocation takes effect on other processes within this
_CACHE_SIZE = 10_000
# Adding a language to a large tenant indexes every memory again: more than a request's time limit.
REINDEX_SETTINGS = {"statement_timeout": "600s"}


class KeyCache:
    """Principals by key digest for a few seconds, so a request costs no key lookup."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, Principal]] = {}

    def get(self, digest: str) -> Principal | None:
        hit = self._entries.get(digest)
        if hit and hit[0] > time.monotonic():
            return hit[1]
        return None

    def put(self, digest: str, principal: Principal) -> None:
        if len(self._entries) >= _CACHE_SIZE:
            self._entries.clear()
        self._entries[digest] = (time.monotonic() + CACHE_SECONDS, principal)

    def forget(self, key_id: uuid.UUID) -> None:
        self._entries = {d: e for d, e in self._entries.items() if e[1].key_id != key_id}


async def authenticate(engram: Engram, key: str) -> Principal:
    """The principal of an active API key; AuthenticationError for anything else."""
    digest = keys.hash_key(key)
    found = engram.key_cache.get(digest)
    if found is None:
        async with engram.db.app() as conn:
            found = await keys.authenticate(conn, key)
        if found is None:
            raise AuthenticationError("the API key is unknown or revoked", field="Authorization")
        engram.key_cache.put(digest, found)
    return found


async def create_key(engram: Engram, who: Principal, spec: KeyInput) -> NewKey:
    who.require(Action.MANAGE_KEYS)
    async with engram.db.tenant(who.tenant_id) as conn:
        made, secret = await keys.create(conn, who.tenant_id, spec)
    return NewKey(**made.model_dump(), key=secret)


async def list_keys(engram: Engram, who: Principal) -> list[ApiKey]:
    who.require(Action.MANAGE_KEYS)
    async with engram.db.tenant(who.tenant_id) as conn:
        return await keys.list_keys(conn, who.tenant_id)


async def revoke_key(engram: Engram, who: Principal, key_id: uuid.UUID | str) -> ApiKey:
    who.require(Action.MANAGE_KEYS)
    kid = parse_uuid(key_id, field="key_id", what="key id")
    async with engram.db.tenant(who.tenant_id) as conn:
        revoked = await keys.revoke(conn, who.tenant_id, kid)
    if revoked is None:
        raise NotFoundError(f"no active key {kid} in tenant {who.tenant_id}", field="key_id")
    engram.key_cache.forget(kid)
    return revoked


async def tenant_settings(engram: Engram, who: Principal) -> TenantSettings:
    who.require(Action.MANAGE_TENANT)
    async with engram.db.tenant(who.tenant_id) as conn:
        return await tenants.get(conn, who.tenant_id)


async def update_tenant(engram: Engram, who: Principal, patch: TenantPatch) -> TenantSettings:
    who.require(Action.MANAGE_TENANT)
    from engram.service.writes import refresh_sessions

    async with engram.db.tenant(who.tenant_id, REINDEX_SETTINGS) as conn:
        sessions = await tenants.set_fts_config(conn, who.tenant_id, patch.fts_config)
        await refresh_sessions(engram, conn, who.tenant_id, sessions)
        settings = await tenants.get(conn, who.tenant_id)
    engram.retriever.forget_corpus(who.tenant_id)
    return settings
