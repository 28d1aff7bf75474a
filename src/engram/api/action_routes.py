"""Actions and the outbox under /v1/actions (SPEC 7)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from engram.api.guard import known_query
from engram.api.routes import Caller, EmbedParam, EngramDep
from engram.model.action import Action, ActionInput, ActionPage, ActionResult, ActionStatus

router = APIRouter(dependencies=[Depends(known_query)], tags=["actions"])


@router.post("/v1/actions", status_code=201, response_model=ActionResult)
async def create_action(
    body: ActionInput, response: Response, engram: EngramDep, caller: Caller, embed: EmbedParam = "sync"
) -> ActionResult:
    """Write an action and, when given, the memory that goes with it, in one transaction: 201 when written,
    200 when the same request with the same idempotency_key was written before (409 for another request).
    A worker carries it out, retries it with backoff, and records the outcome as an episodic memory."""
    result = await engram.act(body, principal=caller, embed=embed)
    if result.replayed:
        response.status_code = 200
    response.headers["Location"] = f"/v1/actions/{result.action.id}"
    return result


@router.get("/v1/actions", response_model=ActionPage)
async def list_actions(
    engram: EngramDep,
    caller: Caller,
    status: ActionStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> ActionPage:
    """Newest first; ``status=dead`` lists the dead letters."""
    return await engram.actions(status=status, cursor=cursor, limit=limit, principal=caller)


@router.get("/v1/actions/{action_id}", response_model=Action)
async def get_action(action_id: uuid.UUID, engram: EngramDep, caller: Caller) -> Action:
    """An action's progress: pending (with its attempts and last error), done or dead."""
    return await engram.action(action_id, principal=caller)


@router.post("/v1/actions/{action_id}/retry", response_model=Action)
async def retry_action(action_id: uuid.UUID, engram: EngramDep, caller: Caller) -> Action:
    """Send a dead action again, its attempts counted afresh (reviewer or admin)."""
    return await engram.retry_action(action_id, principal=caller)
