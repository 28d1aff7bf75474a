"""Workflow state under /v1/workflows (SPEC 6.1)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from engram.api.guard import known_query
from engram.api.routes import Caller, EngramDep, IfMatch, revision_of
from engram.model.workflow import WorkflowState, WorkflowStateInput

router = APIRouter(dependencies=[Depends(known_query)], tags=["workflows"])

WorkflowId = Annotated[str, Path(min_length=1, max_length=256, description="The workflow's id (yours to choose)")]


@router.get("/v1/workflows/{workflow_id}/state", response_model=WorkflowState)
async def get_workflow_state(
    workflow_id: WorkflowId,
    response: Response,
    engram: EngramDep,
    caller: Caller,
    revision: Annotated[int | None, Query(ge=1, le=999_999_999, description="An earlier revision")] = None,
) -> WorkflowState:
    """The workflow's state as last written (ETag: its revision), or as it was at ``revision``; each tool
    result says whether it is still fresh."""
    state = await engram.workflow_state(workflow_id, revision=revision, principal=caller)
    response.headers["ETag"] = f'"{state.revision}"'
    return state


@router.put("/v1/workflows/{workflow_id}/state", response_model=WorkflowState)
async def put_workflow_state(
    workflow_id: WorkflowId,
    body: WorkflowStateInput,
    response: Response,
    engram: EngramDep,
    caller: Caller,
    if_match: IfMatch = None,
) -> WorkflowState:
    """Store the whole state: 201 for a workflow's first state (no If-Match), 200 for the next revision
    (If-Match: the revision you read; 409 when another writer came first, 428 without it). ``status: ended``
    ends the workflow and expires its working memories."""
    expected = revision_of(if_match, required=False)
    state = await engram.put_workflow_state(workflow_id, body, expected_revision=expected, principal=caller)
    response.status_code = 201 if state.revision == 1 else 200
    response.headers["ETag"] = f'"{state.revision}"'
    return state
