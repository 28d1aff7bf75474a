"""Working memory (SPEC 6.1): the state of a running workflow, kept outside the prompt and versioned, so
that a workflow resumes exactly where it stood after a restart, a crash or a day."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from engram.model.memory import ScopeId
from engram.model.rules import Input, Timestamp, check_json

WorkflowStatus = Literal["running", "ended"]
MAX_STATE_BYTES = 262_144  # the whole state as JSON (the table allows more: room for later fields)
MAX_TOOL_RESULT_BYTES = 65_536

Line = Annotated[str, Field(min_length=1, max_length=2000)]
ToolName = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[\w.:/@\-]+$")]


def _tool_value(value: Any) -> Any:
    return check_json(value, max_bytes=MAX_TOOL_RESULT_BYTES)


class ToolResult(Input):
    """A tool's result worth not recomputing, with where it came from and how long it holds."""

    model_config = ConfigDict(extra="forbid")

    value: Annotated[Any, AfterValidator(_tool_value)] = Field(description="The result, any JSON (at most 64 KiB)")
    source: Annotated[str, Field(min_length=1, max_length=2048)] | None = Field(
        None, description="What produced it: a URL, a query, a tool call"
    )
    source_version: Annotated[str, Field(min_length=1, max_length=256)] | None = Field(
        None, description="The source's version when it was read (an ETag, a hash): a different one means stale"
    )
    fetched_at: Timestamp | None = Field(None, description="When it was read (default: when it was stored)")
    fresh_until: Timestamp | None = Field(None, description="After this time it must be fetched again")


class ToolResultView(ToolResult):
    fresh: bool = Field(description="fresh_until has not passed (always true without fresh_until)")


class WorkflowStateInput(Input):
    """What a PUT sends: the whole state (fields left out are empty). ``status: ended`` ends the workflow,
    which expires its working memories; an ended workflow's state stays readable."""

    model_config = ConfigDict(extra="forbid")

    goal: Annotated[str, Field(max_length=4000)] | None = None
    completed_steps: Annotated[list[Line], Field(max_length=1000)] = []
    open_questions: Annotated[list[Line], Field(max_length=200)] = []
    blockers: Annotated[list[Line], Field(max_length=200)] = []
    tool_results: Annotated[dict[ToolName, ToolResult], Field(max_length=200)] = {}
    notes: Annotated[dict[str, Any], AfterValidator(check_json)] = Field(
        default_factory=dict, description="Anything else the agent keeps, JSON (at most 16 KiB)"
    )
    status: WorkflowStatus = "running"
    user_id: ScopeId | None = Field(None, description="The user the workflow works for (kept from the first PUT)")
    agent_id: ScopeId | None = Field(None, description="The agent running it (kept from the first PUT)")


class WorkflowState(BaseModel):
    """A workflow's state as stored, at ``revision``."""

    workflow_id: str
    revision: int
    status: WorkflowStatus
    goal: str | None
    completed_steps: list[str]
    open_questions: list[str]
    blockers: list[str]
    tool_results: dict[str, ToolResultView]
    notes: dict[str, Any]
    user_id: str | None
    agent_id: str | None
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    expired_memories: int = Field(0, description="Working memories this write expired (it ended the workflow)")


STATE_FIELDS = ("goal", "completed_steps", "open_questions", "blockers", "tool_results", "notes")


def stored_state(given: WorkflowStateInput, at: datetime) -> dict[str, Any]:
    """The JSON object stored for ``given``: tool results get their fetch time."""
    out = given.model_dump(mode="json", include=set(STATE_FIELDS))
    for name, result in given.tool_results.items():
        out["tool_results"][name]["fetched_at"] = (result.fetched_at or at).isoformat()
    return out


def view(row: dict[str, Any], at: datetime, expired: int = 0) -> WorkflowState:
    """A stored row as callers read it at time ``at`` (which tool results are still fresh)."""
    state = row["state"]
    results = {}
    for name, raw in state.get("tool_results", {}).items():
        result = ToolResult.model_validate(raw)
        fresh = result.fresh_until is None or result.fresh_until > at
        results[name] = ToolResultView(**result.model_dump(), fresh=fresh)
    return WorkflowState(
        workflow_id=row["workflow_id"], revision=row["revision"], status=row["status"], goal=state.get("goal"),
        completed_steps=state.get("completed_steps", []), open_questions=state.get("open_questions", []),
        blockers=state.get("blockers", []), tool_results=results, notes=state.get("notes", {}),
        user_id=row["user_id"], agent_id=row["agent_id"], created_at=row["created_at"],
        updated_at=row["updated_at"], ended_at=row["ended_at"], expired_memories=expired,
    )  # fmt: skip


def check_size(state: dict[str, Any]) -> None:
    check_json(state, max_bytes=MAX_STATE_BYTES, max_depth=12)
