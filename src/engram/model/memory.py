"""The memory record (SPEC 3): what callers write, what they read back, and what a write answers."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from engram.model.decision import Admission
from engram.model.rules import Input, JsonObject, Timestamp
from engram.model.text import MAX_CONTENT_CHARS, content_hash, has_text, normalise_whitespace

Kind = Literal["working", "episodic", "semantic", "procedural"]
Visibility = Literal["user", "workflow", "tenant", "system"]
Status = Literal["active", "pending_approval", "quarantined", "superseded", "archived", "rejected"]
SourceType = Literal["user_message", "tool_result", "document", "human_note", "system_event", "agent_inference"]

KINDS: tuple[str, ...] = get_args(Kind)
VISIBILITIES: tuple[str, ...] = get_args(Visibility)
STATUSES: tuple[str, ...] = get_args(Status)
SOURCE_TYPES: tuple[str, ...] = get_args(SourceType)

MAX_TAGS = 64


def _no_control_chars(value: str) -> str:
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("must not contain control characters")
    if value != value.strip():
        raise ValueError("must not start or end with whitespace")
    return value


ScopeId = Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_no_control_chars)]
Tag = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_no_control_chars)]
FactKey = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[\w.:/@\-]+$")]
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class Source(Input):
    """Where a memory came from."""

    model_config = ConfigDict(extra="forbid")

    type: SourceType = "user_message"
    ref: Annotated[str, Field(min_length=1, max_length=2048)] | None = None


class MergedSource(BaseModel):
    """A repeat of a memory, merged into it by deduplication instead of stored again."""

    type: SourceType
    ref: str | None = None
    external_id: str | None = None
    merged_at: datetime
    similarity: float = Field(description="Cosine similarity to the memory (1.0 for the same content)")


class Policy(Input):
    """Per-memory handling rules."""

    model_config = ConfigDict(extra="forbid")

    contains_pii: bool = False
    allow_in_prompt: bool = True
    require_citation: bool = False
    require_freshness_check: bool = False
    retention_reason: Annotated[str, Field(min_length=1, max_length=500)] | None = None


def _check_tags(value: list[str]) -> list[str]:
    # Order-preserving de-duplication: tags are a set with a stable display order.
    return list(dict.fromkeys(value))


class _Content(Input):
    """Shared content rules: normalise whitespace, then enforce 1..12,000 characters."""

    @field_validator("content", mode="after", check_fields=False)
    @classmethod
    def _normalise_content(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = normalise_whitespace(value)
        if not has_text(text):
            raise ValueError("must contain text; it is empty, or only whitespace and invisible characters")
        if len(text) > MAX_CONTENT_CHARS:
            raise ValueError(
                f"is {len(text)} characters after whitespace normalisation; the limit is "
                f"{MAX_CONTENT_CHARS}. Store large artefacts elsewhere and reference them with source.ref"
            )
        return text

    @field_validator("summary", mode="after", check_fields=False)
    @classmethod
    def _normalise_summary(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = normalise_whitespace(value)
        return text or None


class MemoryInput(_Content):
    """A memory to write. Only ``content`` is required."""

    model_config = ConfigDict(extra="forbid")

    # Checked after whitespace normalisation (``_Content``); the schema states the same bound.
    content: str = Field(json_schema_extra={"minLength": 1, "maxLength": MAX_CONTENT_CHARS})
    kind: Kind = "episodic"
    subtype: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")] | None = None
    visibility: Visibility = "user"
    summary: Annotated[str, Field(max_length=2000)] | None = None
    fact_key: FactKey | None = None
    source: Source = Field(default_factory=Source)
    confidence: Unit = 0.8
    importance: Unit = 0.5
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None
    workflow_id: ScopeId | None = None
    session_id: ScopeId | None = None
    external_id: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    valid_from: Timestamp | None = None
    valid_until: Timestamp | None = None
    expires_at: Timestamp | None = None
    policy: Policy = Field(default_factory=Policy)
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS), AfterValidator(_check_tags)] = Field(default_factory=list)
    metadata: JsonObject = Field(default_factory=dict)

    @field_validator("valid_until", mode="after")
    @classmethod
    def _check_validity_window(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        _check_window(info.data.get("valid_from"), value)
        return value

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


def _check_window(valid_from: datetime | None, valid_until: datetime | None) -> None:
    if valid_until is None:
        return
    start = valid_from or datetime.now(UTC)
    if valid_until <= start:
        what = "valid_from" if valid_from is not None else "now (valid_from defaults to the write time)"
        raise ValueError(f"valid_until must be later than {what}")


Omitted = SkipJsonSchema[None]  # the default of a field that may be left out but not sent as null


class MemoryPatch(_Content):
    """A partial update. Fields left out keep their value; scopes and external_id cannot change."""

    model_config = ConfigDict(extra="forbid")

    # ``| Omitted``: a field left out keeps its value, and null is refused for those a memory must have
    # (subtype, summary, valid_until and expires_at may be cleared with null).
    content: str | Omitted = None
    kind: Kind | Omitted = None
    subtype: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")] | None = None
    visibility: Visibility | Omitted = None
    summary: Annotated[str, Field(max_length=2000)] | None = None
    source: Source | Omitted = None
    confidence: Unit | Omitted = None
    importance: Unit | Omitted = None
    valid_from: Timestamp | Omitted = None
    valid_until: Timestamp | None = None
    expires_at: Timestamp | None = None
    policy: Policy | Omitted = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS), AfterValidator(_check_tags)] | Omitted = None
    metadata: JsonObject | Omitted = None
    # Not changeable: named here so that sending one says so (instead of "extra inputs are not permitted").
    user_id: SkipJsonSchema[Any] = None
    agent_id: SkipJsonSchema[Any] = None
    workflow_id: SkipJsonSchema[Any] = None
    session_id: SkipJsonSchema[Any] = None
    external_id: SkipJsonSchema[Any] = None
    fact_key: SkipJsonSchema[Any] = None
    status: SkipJsonSchema[Any] = None
    id: SkipJsonSchema[Any] = None
    revision: SkipJsonSchema[Any] = None

    @field_validator("user_id", "agent_id", "workflow_id", "session_id", "external_id", "fact_key", mode="before")
    @classmethod
    def _immutable(cls, value: object, info: ValidationInfo) -> object:
        raise ValueError(f"{info.field_name} cannot be changed: write a new memory")

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: object) -> object:
        raise ValueError(
            "status cannot be set by an update: archive or unarchive the memory, or write the fact again to "
            "supersede it"
        )

    @field_validator("id", "revision", mode="before")
    @classmethod
    def _managed(cls, value: object, info: ValidationInfo) -> object:
        raise ValueError(f"{info.field_name} is set by Engram; send the revision you read as If-Match")

    @field_validator("valid_until", mode="after")
    @classmethod
    def _check_validity_window(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        if info.data.get("valid_from") is not None:
            _check_window(info.data.get("valid_from"), value)
        return value

    @field_validator(
        "content", "kind", "visibility", "source", "confidence", "importance", "valid_from", "policy", "tags",
        "metadata", mode="after",
    )  # fmt: skip
    @classmethod
    def _not_null(cls, value: object) -> object:
        # Only runs for fields the caller sent: an explicit null cannot clear a required field.
        if value is None:
            raise ValueError("must not be null; leave the field out to keep its current value")
        return value

    @model_validator(mode="after")
    def _check_not_empty(self) -> MemoryPatch:
        if not self.model_fields_set:
            raise ValueError("an update must change at least one field")
        return self

    def changes(self) -> dict[str, Any]:
        """The fields the caller set, as they will be stored (nested models flattened later)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class Memory(BaseModel):
    """A stored memory as read back."""

    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    tenant_id: str
    user_id: str | None
    agent_id: str | None
    workflow_id: str | None
    session_id: str | None
    external_id: str | None
    kind: Kind
    subtype: str | None
    visibility: Visibility
    content: str
    summary: str | None
    content_hash: str
    fact_key: str | None
    source: Source
    confidence: float
    importance: float
    status: Status
    revision: int
    valid_from: datetime
    valid_until: datetime | None
    recorded_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    superseded_by: uuid.UUID | None
    policy: Policy
    tags: list[str]
    metadata: dict[str, Any]
    last_used_at: datetime | None
    use_count: int
    admission: Admission = Field(
        default_factory=Admission, description="The admission decision that let it in, with its reasons"
    )
    sources: list[MergedSource] = Field(
        default_factory=list, description="Where the repeats merged into it came from (the first 100)"
    )

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Memory:
        """Build from a flat database row (source_* and policy columns are nested here)."""
        data = dict(row)
        data["source"] = Source(type=data.pop("source_type"), ref=data.pop("source_ref"))
        data["policy"] = Policy(
            contains_pii=data.pop("contains_pii"),
            allow_in_prompt=data.pop("allow_in_prompt"),
            require_citation=data.pop("require_citation"),
            require_freshness_check=data.pop("require_freshness_check"),
            retention_reason=data.pop("retention_reason"),
        )
        return cls.model_validate(data)

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> Memory:
        """A revision's snapshot (the stored row as JSON, ``memory_revisions``) in the shape of a memory;
        columns it does not have (snapshots from older versions) take their defaults."""
        row = {**_SNAPSHOT_DEFAULTS, **snapshot}
        return cls.from_row({name: row.get(name) for name in _ROW_COLUMNS})


# The flat row ``Memory.from_row`` takes, and what a snapshot of an earlier version may lack.
_ROW_COLUMNS = (
    *(n for n in Memory.model_fields if n not in ("source", "policy")),
    "source_type", "source_ref", "contains_pii", "allow_in_prompt", "require_citation", "require_freshness_check",
    "retention_reason",
)  # fmt: skip
_SNAPSHOT_DEFAULTS: dict[str, Any] = {
    "source_type": "user_message", "contains_pii": False, "allow_in_prompt": True, "require_citation": False,
    "require_freshness_check": False, "tags": [], "metadata": {}, "use_count": 0, "revision": 1, "admission": {},
    "sources": [],
}  # fmt: skip


class WriteResult(BaseModel):
    """What a write answers: the id, where the memory stands, and why."""

    id: uuid.UUID
    revision: int
    status: Status
    replayed: bool
    reasons: list[str]
    supersedes: list[uuid.UUID] = Field(default_factory=list)
    embedded: bool = False
    memory: Memory | None = None
    admission: Admission = Field(default_factory=Admission)
    merged_into: uuid.UUID | None = Field(default=None, description="The stored memory this one was merged into")


class HistoryEntry(BaseModel):
    """One revision of a memory: the full record as it stood after the change."""

    revision: int
    change: str
    actor: str
    changed_at: datetime
    snapshot: Memory


class MemoryPage(BaseModel):
    items: list[Memory]
    next_cursor: str | None
