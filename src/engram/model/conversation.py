"""Conversation turns (SPEC 6.2): what a session appends to its buffer, and what the append answers."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from engram.model.memory import ScopeId, WriteResult
from engram.model.rules import Input, Timestamp
from engram.model.text import MAX_CONTENT_CHARS


class TurnInput(Input):
    model_config = ConfigDict(extra="forbid")

    speaker: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        "user", description="Who said it: user, assistant, or a name"
    )
    content: Annotated[str, Field(min_length=1, max_length=MAX_CONTENT_CHARS)]
    at: Timestamp | None = Field(None, description="When it was said (default: now)")
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None


class BufferedTurn(BaseModel):
    seq: int
    speaker: str
    content: str
    at: datetime
    user_id: str | None = None
    agent_id: str | None = None


class TurnAck(BaseModel):
    """The turn is stored (in Redis or PostgreSQL) once this is answered."""

    session_id: str
    buffered: int = Field(description="Turns waiting in the session's buffer after this one")
    condensed: list[WriteResult] = Field(description="Memories written from the turns condensed by this append")
    turns_condensed: int = 0
    raw_chars: int = Field(0, description="Characters of the condensed turns")
    memory_chars: int = Field(0, description="Characters of the memories written from them")
    summariser: str | None = Field(None, description="What condensed them: extractive, or llm:<model>")
    storage: str = Field(description="redis or postgresql")
