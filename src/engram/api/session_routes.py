"""Conversation turns under /v1/sessions (SPEC 6.2)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from engram.api.guard import known_query
from engram.api.routes import Caller, EngramDep
from engram.model.conversation import BufferedTurn, TurnAck, TurnInput

router = APIRouter(dependencies=[Depends(known_query)], tags=["sessions"])

SessionId = Annotated[str, Path(min_length=1, max_length=256, description="The conversation's id (yours to choose)")]


@router.post("/v1/sessions/{session_id}/turns", status_code=201, response_model=TurnAck)
async def add_turn(session_id: SessionId, body: TurnInput, engram: EngramDep, caller: Caller) -> TurnAck:
    """Append a turn to the session's buffer (Redis when configured, else PostgreSQL): 201 means it is
    stored; 503 when the buffer cannot be reached (nothing stored). Every ENGRAM_BUFFER_TURNS turns the
    oldest are condensed into memories through the admission policy; the answer lists them."""
    return await engram.add_turn(session_id, body, principal=caller)


@router.get("/v1/sessions/{session_id}/turns", response_model=list[BufferedTurn])
async def buffered_turns(session_id: SessionId, engram: EngramDep, caller: Caller) -> list[BufferedTurn]:
    """The turns waiting in the session's buffer, oldest first."""
    return await engram.buffered_turns(session_id, principal=caller)
