"""The approval queue over REST (reviewer and admin keys): memories admission held or quarantined, and the
decision on each."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from engram.api.guard import known_query
from engram.api.routes import Caller, EngramDep, IfMatch, revision_of
from engram.model import Memory, MemoryPage
from engram.service.approvals import Queue

router = APIRouter(dependencies=[Depends(known_query)], tags=["approvals"])


@router.get("/v1/approvals", response_model=MemoryPage)
async def list_approvals(
    engram: EngramDep,
    caller: Caller,
    status: Queue | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> MemoryPage:
    """Memories awaiting a reviewer, oldest first (`status`: pending_approval, quarantined, or both when
    left out); each carries the `admission` reasons that held it."""
    return await engram.approvals(status=status, limit=limit, cursor=cursor, principal=caller)


@router.post("/v1/approvals/{memory_id}:approve", response_model=Memory)
async def approve(memory_id: uuid.UUID, engram: EngramDep, caller: Caller, if_match: IfMatch = None) -> Memory:
    """Admit the memory: it becomes active, and the memory of its fact when it has a fact_key."""
    return await engram.approve(memory_id, expected_revision=revision_of(if_match, required=False), principal=caller)


@router.post("/v1/approvals/{memory_id}:reject", response_model=Memory)
async def reject(memory_id: uuid.UUID, engram: EngramDep, caller: Caller, if_match: IfMatch = None) -> Memory:
    """Refuse the memory: it is kept with status rejected, out of every recall."""
    return await engram.reject(memory_id, expected_revision=revision_of(if_match, required=False), principal=caller)
