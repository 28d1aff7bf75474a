"""Administration as service operations: API keys (and the principal a key stands for), tenant settings,
and upkeep (enrichment, large tenants' indexes, planner statistics)."""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Mapping
from typing import Any

from engram.errors import AuthenticationError, NotFoundError
from engram.model.access import Action, ApiKey, KeyInput, NewKey, Principal
from engram.model.ids import parse_uuid
from engram.model.tenant import TenantPatch, TenantSettings
from engram.model.validation import parse
from engram.service import pii
from engram.service.core import Core
from engram.store import embeddings as emb
from engram.store import keys, queues, scope_indexes, tenants


async def _authenticate(engram: Core, key: str) -> Principal:
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


async def _create_key(engram: Core, who: Principal, spec: KeyInput) -> NewKey:
    who.require(Action.MANAGE_KEYS)
    async with engram.db.tenant(who.tenant_id) as conn:
        made, secret = await keys.create(conn, who.tenant_id, spec)
    return NewKey(**made.model_dump(), key=secret)


async def _list_keys(engram: Core, who: Principal) -> list[ApiKey]:
    who.require(Action.MANAGE_KEYS)
    async with engram.db.tenant(who.tenant_id) as conn:
        return await keys.list_keys(conn, who.tenant_id)


async def _revoke_key(engram: Core, who: Principal, key_id: uuid.UUID | str) -> ApiKey:
    who.require(Action.MANAGE_KEYS)
    kid = parse_uuid(key_id, field="key_id", what="key id")
    async with engram.db.tenant(who.tenant_id) as conn:
        revoked = await keys.revoke(conn, who.tenant_id, kid)
    if revoked is None:
        raise NotFoundError(f"no active key {kid} in tenant {who.tenant_id}", field="key_id")
    engram.key_cache.drop(lambda p: p.key_id == kid)
    return revoked


async def _tenant_settings(engram: Core, who: Principal) -> TenantSettings:
    who.require(Action.MANAGE_TENANT)
    async with engram.db.tenant(who.tenant_id) as conn:
        return await tenants.get(conn, who.tenant_id)


async def _update_tenant(engram: Core, who: Principal, patch: TenantPatch) -> TenantSettings:
    """Set the tenant's settings now; a new text search configuration reaches its memories in the background
    (``reindex``), a batch per transaction, each statement well inside the time limit."""
    who.require(Action.MANAGE_TENANT)
    async with engram.db.tenant(who.tenant_id) as conn:
        if patch.fts_config is not None:
            await tenants.set_fts_config(conn, who.tenant_id, patch.fts_config)
        if patch.source_trust is not None:
            await tenants.set_source_trust(conn, who.tenant_id, {str(k): v for k, v in patch.source_trust.items()})
        settings = await tenants.get(conn, who.tenant_id)
    engram.retriever.forget_corpus(who.tenant_id)
    if settings.memories_to_reindex:
        engram.spawn(reindex(engram, who.tenant_id))
    return settings


async def reindex(engram: Core, tenant_id: str) -> int:
    """Index the tenant's memories again with its text search configuration, until none is left (also what a
    repeated PATCH resumes after a restart). Returns how many were indexed."""
    from engram.service.writes import refresh_sessions

    done = 0
    while True:
        async with engram.db.tenant(tenant_id) as conn:
            n, sessions = await tenants.reindex_batch(conn, tenant_id)
            await refresh_sessions(engram, conn, tenant_id, sessions)
        done += n
        if n < tenants.REINDEX_BATCH_SIZE:
            return done


class Administration(Core):
    """Keys, tenant settings and upkeep, as operations of Engram."""

    async def authenticate(self, key: str) -> Principal:
        """The principal an API key stands for (its tenant, role and binding); AuthenticationError if the
        key is unknown or revoked. Cached for a few seconds."""
        return await _authenticate(self, key)

    async def create_key(
        self,
        spec: KeyInput | Mapping[str, Any] | None = None,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> NewKey:
        """A new API key of the tenant (admin): role, name, and optionally the user and agent it is bound
        to. The secret is in the result, once."""
        return await _create_key(self, self._who(tenant, principal), parse(KeyInput, spec or fields))

    async def list_keys(
        self, *, tenant: str | None = None, principal: Principal | None = None
    ) -> builtins.list[ApiKey]:
        return await _list_keys(self, self._who(tenant, principal))

    async def revoke_key(
        self, key_id: uuid.UUID | str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> ApiKey:
        """Revoke a key: at once in this process, within 10 seconds in others."""
        return await _revoke_key(self, self._who(tenant, principal), key_id)

    async def tenant_settings(self, *, tenant: str | None = None, principal: Principal | None = None) -> TenantSettings:
        return await _tenant_settings(self, self._who(tenant, principal))

    async def update_tenant(
        self,
        patch: TenantPatch | Mapping[str, Any],
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> TenantSettings:
        """Change the tenant's settings (admin); a new ``fts_config`` indexes every memory again."""
        return await _update_tenant(self, self._who(tenant, principal), parse(TenantPatch, patch))

    # --- enrichment and upkeep --------------------------------------------------------------------------

    async def rotate_vault(self, *, tenant: str | None = None, principal: Principal | None = None) -> int:
        """Seal the tenant's vault values again under the current key (the first of ENGRAM_VAULT_KEYS), so
        that older keys can be dropped from the configuration; returns how many were (admin)."""
        who = self._who(tenant, principal)
        who.require(Action.MANAGE_TENANT)
        return await pii.rotate(self, who.tenant_id)

    async def enrich_pending(self, *, limit: int = 256, lease_seconds: int = 60) -> int:
        """Embed memories that wait for a vector (all tenants, leased fairly). Returns how many got one."""
        from engram.workers.enrichment import run_once

        return await run_once(self, limit=limit, lease_seconds=lease_seconds)

    async def index_large_tenants(
        self, threshold: int = emb.TENANT_INDEX_THRESHOLD, owner_threshold: int = scope_indexes.SCOPE_INDEX_THRESHOLD
    ) -> builtins.list[str]:
        """Build a dedicated HNSW index for every tenant with at least ``threshold`` shared vectors, and for
        every owner (a user or workflow) with at least ``owner_threshold`` (concurrently, writes go on).
        Runs periodically inside ``engram serve``; returns the tenants indexed now. Needs the owner's
        connection (and an owner not held to row-level security, as the embedded one is)."""
        if self.gateway is None or self.db.owner_conninfo is None:
            return []
        model, dims = self.gateway.model_id, self.gateway.dimensions
        async with self.db.owner() as conn:
            tenants = await emb.index_large_tenants(conn, model, dims, threshold)
            owners = await scope_indexes.index_large_owners(conn, model, dims, owner_threshold)
        return sorted({*tenants, *owners})

    async def embedding_backlog(self) -> int:
        async with self.db.queue() as conn:
            row = await (await conn.execute(emb.BACKLOG)).fetchone()
        return int(row["n"]) if row else 0

    async def queue_stats(self) -> dict[str, dict[str, float]]:
        """Depth and oldest age of each background queue (embedding, outbox, outbox_dead), across tenants."""
        async with self.db.queue() as conn:
            return await queues.stats(conn)

    async def analyze(self) -> None:
        """Refresh the planner's statistics of the recall tables (what autovacuum does after a bulk load)."""
        from engram.retrieval.corpus import ANALYZE_RECALL_TABLES

        async with self.db.owner() as conn:
            await conn.execute(ANALYZE_RECALL_TABLES)
