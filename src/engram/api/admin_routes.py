"""Administration over REST: API keys of the tenant, its settings and its admission policy (admin keys; any
key may read the policy)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response
from pydantic import BaseModel, ConfigDict, Field

from engram.api.auth import get_engram, principal
from engram.api.guard import known_query
from engram.model.access import ApiKey, KeyInput, NewKey, Principal
from engram.model.admission import AdmissionPolicy, AdmissionPolicyPatch
from engram.model.consolidation import ConsolidationReport, ConsolidationRequest
from engram.model.forget import DeletionCertificate
from engram.model.lifecycle import DecayReport, LifecyclePolicy, ReceiptPruneReport
from engram.model.tenant import TenantPatch, TenantSettings
from engram.model.wire import RescanReport, ScheduledRun, VaultRotation
from engram.service import Engram

router = APIRouter(dependencies=[Depends(known_query)], tags=["admin"])

EngramDep = Annotated[Engram, Depends(get_engram)]
Caller = Annotated[Principal, Depends(principal)]


@router.post("/v1/keys", status_code=201, response_model=NewKey)
async def create_key(body: KeyInput, response: Response, engram: EngramDep, caller: Caller) -> NewKey:
    """A new key of the caller's tenant, optionally bound to a user and/or an agent. The secret (`key`) is
    in this answer only."""
    made = await engram.create_key(body, principal=caller)
    response.headers["Location"] = f"/v1/keys/{made.id}"
    return made


@router.get("/v1/keys", response_model=list[ApiKey])
async def list_keys(engram: EngramDep, caller: Caller) -> list[ApiKey]:
    """The tenant's keys, active and revoked (never their secrets)."""
    return await engram.list_keys(principal=caller)


@router.delete("/v1/keys/{key_id}", response_model=ApiKey)
async def revoke_key(key_id: uuid.UUID, engram: EngramDep, caller: Caller) -> ApiKey:
    """Revoke a key: at once on this server, within 10 seconds on others."""
    return await engram.revoke_key(key_id, principal=caller)


@router.get("/v1/tenant", response_model=TenantSettings)
async def get_tenant(engram: EngramDep, caller: Caller) -> TenantSettings:
    """The tenant's settings: text search language and trust per source type."""
    return await engram.tenant_settings(principal=caller)


@router.patch("/v1/tenant", response_model=TenantSettings)
async def update_tenant(body: TenantPatch, engram: EngramDep, caller: Caller) -> TenantSettings:
    """Change the tenant's settings; a new `fts_config` indexes every memory of the tenant again."""
    return await engram.update_tenant(body, principal=caller)


@router.get("/v1/policy", response_model=AdmissionPolicy, tags=["admission"])
async def get_policy(engram: EngramDep, caller: Caller) -> AdmissionPolicy:
    """The admission policy every write of the tenant passes (any role may read it)."""
    return await engram.admission_policy(principal=caller)


@router.patch("/v1/policy", response_model=AdmissionPolicy, tags=["admission"])
async def update_policy(body: AdmissionPolicyPatch, engram: EngramDep, caller: Caller) -> AdmissionPolicy:
    """Change the admission policy (admin): the fields sent; a new `profile` first resets the others to its
    defaults. Writes follow it at once; stored memories keep their decisions."""
    return await engram.update_admission_policy(body, principal=caller)


class RescanRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch: Annotated[int, Field(ge=1, le=500, description="Memories in this call")] = 200
    cursor: Annotated[str | None, Field(max_length=64, description="next_cursor of the previous call")] = None


@router.post("/v1/policy:rescan", response_model=RescanReport, tags=["admission"])
async def rescan(body: RescanRequest, engram: EngramDep, caller: Caller) -> RescanReport:
    """Apply the current admission policy to one batch of the tenant's active memories (admin): secrets
    redacted, what now fails quarantined. Call again with `next_cursor` until it is null."""
    return await engram.rescan(batch=body.batch, cursor=body.cursor, principal=caller)


@router.post("/v1/vault:rotate", response_model=VaultRotation, tags=["admission"])
async def rotate_vault(engram: EngramDep, caller: Caller) -> VaultRotation:
    """Seal the tenant's PII vault values again under the current key (the first of ENGRAM_VAULT_KEYS), so
    that older keys can leave the configuration (admin)."""
    return VaultRotation(resealed=await engram.rotate_vault(principal=caller))


@router.post("/v1/subjects/{user_id}:forget", response_model=DeletionCertificate, tags=["lifecycle"])
async def forget_subject(
    user_id: Annotated[str, Path(min_length=1, max_length=256, description="The user to forget")],
    engram: EngramDep,
    caller: Caller,
) -> DeletionCertificate:
    """Remove everything this tenant holds of a user (admin, unbound key) and answer with a deletion
    certificate: rows removed per table, the memories, and a digest that the audit tombstone repeats."""
    return await engram.forget_subject(user_id, principal=caller)


@router.post("/v1/admin/consolidate", response_model=ConsolidationReport, tags=["lifecycle"])
async def consolidate(body: ConsolidationRequest, engram: EngramDep, caller: Caller) -> ConsolidationReport:
    """Turn an agent's repeated episodes into facts derived from them (admin); idempotent. A consolidation of the
    same agent already running makes this one return at once with `skipped_locked`."""
    return await engram.consolidate(body, principal=caller)


@router.get("/v1/admin/lifecycle", response_model=LifecyclePolicy, tags=["lifecycle"])
async def get_lifecycle(engram: EngramDep, caller: Caller) -> LifecyclePolicy:
    """The tenant's decay rules: the priority threshold, half-lives and per-kind time limits (any role)."""
    return await engram.lifecycle_policy(principal=caller)


@router.put("/v1/admin/lifecycle", response_model=LifecyclePolicy, tags=["lifecycle"])
async def put_lifecycle(body: LifecyclePolicy, engram: EngramDep, caller: Caller) -> LifecyclePolicy:
    """Replace the tenant's decay rules (admin); fields left out take their defaults, null turns a rule off."""
    return await engram.set_lifecycle_policy(body, principal=caller)


class DecayRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool = Field(False, description="Report what would be archived or expired, change nothing")


@router.post("/v1/admin/decay", response_model=DecayReport, tags=["lifecycle"])
async def run_decay(body: DecayRequest, engram: EngramDep, caller: Caller) -> DecayReport:
    """One decay pass now (admin): archive what fell below the threshold, expire what the rules end."""
    return await engram.decay(dry_run=body.dry_run, principal=caller)


class PruneRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool = Field(False, description="Count the receipts that would be deleted, delete nothing")


@router.post("/v1/receipts:prune", response_model=ReceiptPruneReport, tags=["lifecycle"])
async def prune_receipts(body: PruneRequest, engram: EngramDep, caller: Caller) -> ReceiptPruneReport:
    """Delete the tenant's recall receipts older than its lifecycle policy's `receipt_days` now (admin); the
    scheduled `receipts` job does the same every hour."""
    return await engram.prune_receipts(dry_run=body.dry_run, principal=caller)


@router.get("/v1/admin/jobs", response_model=list[ScheduledRun], tags=["lifecycle"])
async def scheduled_jobs(engram: EngramDep, caller: Caller) -> list[ScheduledRun]:
    """The tenant's periodic jobs (decay, consolidation, receipts): when each last ran, what came of it, when it
    runs next."""
    return [ScheduledRun.model_validate(r) for r in await engram.scheduled_runs(principal=caller)]
