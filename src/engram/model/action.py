"""Actions (SPEC 7): what an agent asks to be done, written with the memory that implies it, and what came
of it."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from engram.model.memory import MemoryInput, ScopeId, WriteResult
from engram.model.rules import Input, check_json

ActionStatus = Literal["pending", "done", "dead"]
ACTION_STATUSES: tuple[str, ...] = ("pending", "done", "dead")
MAX_PAYLOAD_BYTES = 65_536
HandlerName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_.-]*$")]


def _payload(value: dict[str, Any]) -> dict[str, Any]:
    return check_json(value, max_bytes=MAX_PAYLOAD_BYTES)  # type: ignore[no-any-return]


class ActionInput(Input):
    """An action and, optionally, the memory that goes with it: both are written in one transaction or
    neither is. Sending the same ``idempotency_key`` again with the same request answers with what was
    written the first time; with a different request it is a 409."""

    model_config = ConfigDict(extra="forbid")

    idempotency_key: Annotated[str, Field(min_length=1, max_length=256)] = Field(
        description="Yours to choose, unique per tenant; the handler passes it on (a webhook as Idempotency-Key)"
    )
    handler: HandlerName = Field("webhook", description="Who carries it out: webhook (built in) or a registered one")
    url: Annotated[str, Field(min_length=1, max_length=2048)] | None = Field(
        None, description="webhook: the http(s) URL the payload is POSTed to"
    )
    payload: Annotated[dict[str, Any], AfterValidator(_payload)] = Field(
        default_factory=dict, description="JSON object sent to the handler (at most 64 KiB)"
    )
    memory: MemoryInput | None = Field(None, description="The memory written with the action, in its transaction")
    max_attempts: Annotated[int, Field(ge=1, le=100)] = Field(8, description="Dead-lettered after this many")
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None
    workflow_id: ScopeId | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.lower().startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value

    def request_hash(self) -> str:
        """What identifies this request for replays: every field but the key itself."""
        body = self.model_dump(mode="json", exclude={"idempotency_key"})
        return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Action(BaseModel):
    """An action as stored, with its progress."""

    id: uuid.UUID
    idempotency_key: str
    handler: str
    url: str | None
    payload: dict[str, Any]
    memory_id: uuid.UUID | None
    user_id: str | None
    agent_id: str | None
    workflow_id: str | None
    status: ActionStatus
    attempts: int
    max_attempts: int
    next_attempt_at: datetime
    last_error: str | None
    result: dict[str, Any] | None
    outcome_memory_id: uuid.UUID | None = Field(description="The episodic memory recording what came of it")
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Action:
        return cls(**{**row, "url": row["target"]})


class ActionResult(BaseModel):
    """What POST /v1/actions answers."""

    action: Action
    memory: WriteResult | None = None
    replayed: bool = Field(description="The same request was written before: this is what it wrote")


class ActionPage(BaseModel):
    items: list[Action]
    next_cursor: str | None = None
