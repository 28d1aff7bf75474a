"""Recall: the request, the ranked items with their evidence, the prompt packet and the receipt."""

from __future__ import annotations

import functools
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engram.model.memory import Kind, ScopeId, Source, Tag
from engram.model.rules import Input, JsonObject, Timestamp
from engram.model.text import has_text, normalise_whitespace

Preset = Literal["hybrid", "dense", "lexical"]
M = TypeVar("M", bound=BaseModel)


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """``cls.model_construct(**values)`` for values that are already valid and name every field (recall's
    items, built from stored rows): the same instance without model_construct's walk over every field's
    aliases and defaults (a tenth of its time; ten items a recall). For plain models only: no aliases,
    private attributes, extra fields or post-init hook (checked once per class)."""
    _check_plain(cls)
    fields = cls.__pydantic_fields__.keys()
    if values.keys() != fields:
        raise TypeError(
            f"{cls.__name__}: missing {sorted(fields - values.keys())}; unknown {sorted(values.keys() - fields)}"
        )
    m = cls.__new__(cls)
    object.__setattr__(m, "__dict__", values)
    object.__setattr__(m, "__pydantic_fields_set__", set(values))
    object.__setattr__(m, "__pydantic_extra__", None)
    object.__setattr__(m, "__pydantic_private__", None)
    return m


@functools.cache
def _check_plain(cls: type[BaseModel]) -> None:
    aliased = [n for n, f in cls.__pydantic_fields__.items() if f.alias or f.validation_alias]
    if aliased or cls.__private_attributes__ or cls.__pydantic_post_init__ or cls.model_config.get("extra") == "allow":
        raise TypeError(f"{cls.__name__} is not a plain model: use model_construct")


class RecallRequest(Input):
    """What to recall. Filters are applied inside every candidate query, before ranking."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, Field(min_length=1, max_length=4000)]
    user_id: ScopeId | None = Field(None, description="Acting for this user: sees their user-visible memories")
    workflow_id: ScopeId | None = Field(None, description="Acting in this workflow: sees its workflow memories")
    agent_id: ScopeId | None = Field(None, description="Acting as this agent: its memories and those of no agent")
    session_id: ScopeId | None = Field(None, description="Only memories of this session")
    kinds: Annotated[list[Kind], Field(max_length=4)] | None = None
    tags: Annotated[list[Tag], Field(max_length=64)] = Field(default_factory=list)
    metadata: JsonObject = Field(default_factory=dict, description="JSON containment filter")
    max_items: Annotated[int, Field(ge=1, le=100)] = 10
    max_tokens: Annotated[int, Field(ge=1, le=200_000)] = 2000
    as_of: Timestamp | None = Field(None, description="Recall what was valid and known at this time")
    preset: Preset = "hybrid"

    @field_validator("query", mode="after")
    @classmethod
    def _query_text(cls, value: str) -> str:
        text = normalise_whitespace(value)
        if not has_text(text):
            raise ValueError("must contain text; it is empty, or only whitespace and invisible characters")
        return text

    @field_validator("kinds", mode="after")
    @classmethod
    def _distinct_kinds(cls, value: list[str] | None) -> list[str] | None:
        return list(dict.fromkeys(value)) if value is not None else None


class RecallItem(BaseModel):
    """One recalled memory, with why it was picked."""

    id: uuid.UUID
    content: str
    summary: str | None
    kind: Kind
    source: Source
    recorded_at: datetime
    valid_from: datetime
    confidence: float
    importance: float
    score: float
    ranks: dict[str, int] = Field(description="1-based rank in each retriever that found it")
    signals: dict[str, float] = Field(description="The raw scores fused into `score`")
    reasons: list[str]
    require_citation: bool = False
    ref: int = Field(0, description="The item's reference in the packet: [ref] (1-based; 0 when not placed)")
    trust: float = Field(1.0, description="The trust prior of the item's source type (the tenant's source_trust)")
    conflicts_with: list[uuid.UUID] = Field(
        default_factory=list,
        description="Selected items this one disagrees with (same fact key, a contradicts relation, or the same "
        "statement with other numbers, dates or names); the one ranked first is newer or better sourced",
    )


PlanName = Literal["scope-exact", "owner-index", "tenant-index", "shared-index"]


class RecallPlan(BaseModel):
    """How recall read its candidates, chosen from the size of the caller's scope (SPEC 5.1)."""

    name: PlanName = Field(
        description="scope-exact: every row of the caller's scope scored exactly, read through the scope "
        "indexes; owner-index: the HNSW index of the one large owner (user or workflow) in the scope, the rest "
        "scored exactly; tenant-index: the tenant's own HNSW index, filtered; shared-index: the model's HNSW "
        "index shared by the tenants without one of their own, filtered"
    )
    scope_size: int | None = Field(
        None, description="Active memories the caller may see (its own and the shared ones), counted up to a cap"
    )
    reason: str = Field(description="Why this plan was chosen")
    index_owner: str | None = Field(None, description="owner-index: the owner whose index is read (u:<user>, w:<wf>)")
    dense_rows: int | None = Field(
        None,
        description="An exact scan of the scope (scope-exact), or a walk of a graph every vector of which is in "
        "scope (owner-index; tenant-index for a scope of the whole tenant): the dense rows it returns, fewer than "
        "the candidates; None: the candidates",
    )
    lexical_rows: int | None = Field(
        None,
        description="BM25F over the scope's own postings beside that exact scan or walk: the lexical rows it "
        "returns, as many as the dense ones; None: the candidates",
    )


class RecallResult(BaseModel):
    items: list[RecallItem]
    packet: str
    packet_tokens: int
    receipt_id: uuid.UUID
    degraded: bool
    degraded_reason: str | None = None
    abstain: bool = Field(description="Nothing relevant was found: the agent should say it does not know")
    empty_reason: str | None = Field(
        None,
        description="Why items is empty: no_relevant_memories (abstain), or budget_too_small (relevant memories "
        "exist but none fits max_tokens)",
    )
    latency_ms: float
    plan: RecallPlan | None = Field(None, description="How the candidates were read (None: no dense retrieval)")


class Receipt(BaseModel):
    id: uuid.UUID
    created_at: datetime
    actor: str
    principal: dict[str, Any] = Field(
        default_factory=dict, description="Who recalled: key_id, role, and the user and agent it acted as"
    )
    query: str
    request: dict[str, Any]
    retrievers: dict[str, Any]
    selected: list[dict[str, Any]]
    packet_tokens: int
    latency_ms: float
    degraded: bool
    abstained: bool


class RelationInput(Input):
    model_config = ConfigDict(extra="forbid")

    src_id: uuid.UUID
    dst_id: uuid.UUID
    type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    weight: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    metadata: JsonObject = Field(default_factory=dict)


class Relation(BaseModel):
    id: uuid.UUID
    src_id: uuid.UUID
    dst_id: uuid.UUID
    type: str
    weight: float
    metadata: dict[str, Any]
    created_at: datetime
