"""Decay and forgetting (SPEC 6.3): a tenant's lifecycle policy, what a decay pass did and what the receipts'
retention removed."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Days = Annotated[float, Field(gt=0, le=36_500, allow_inf_nan=False)]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class LifecyclePolicy(BaseModel):
    """What the decay job does for a tenant. A rule set to null is off."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="Run the scheduled decay job for this tenant")
    archive_below: Share = Field(0.3, description="Archive an active memory whose priority falls below this")
    min_age_days: Days = Field(7, description="Nothing younger is archived for its priority alone")
    use_half_life_days: Days = Field(30, description="Days for the weight of the last use to halve")
    age_half_life_days: Days = Field(180, description="Days for the weight of a memory's age to halve")
    working_idle_days: Days | None = Field(
        7, description="A working memory untouched this long expires (its workflow ending expires it at once)"
    )
    tool_results_expire_on_change: bool = Field(
        True, description="A tool result expires when a newer result from the same source (source.ref) arrives"
    )
    preference_unused_days: Days | None = Field(180, description="A preference not used this long is archived")
    low_confidence_below: Share = Field(0.5, description="What counts as low confidence")
    low_confidence_unused_days: Days | None = Field(
        30, description="A low-confidence memory not used this long is archived"
    )
    sensitive_days: Days | None = Field(
        365, description="A memory holding personal data expires this long after it was recorded"
    )
    receipt_days: Days | None = Field(
        90,
        description="Recall receipts older than this are deleted by the scheduled receipts job (null keeps them); "
        "the rules above leave receipts alone, and turning decay off does not stop this one",
    )


DecayAction = Literal["archive", "expire"]


class DecayDecision(BaseModel):
    id: uuid.UUID
    action: DecayAction
    reason: str = Field(description="expired, working_idle, source_changed, sensitive_ttl, preference_unused, "
                        "low_confidence_unused or low_priority")  # fmt: skip
    priority: float


class DecayReport(BaseModel):
    tenant_id: str
    dry_run: bool
    scanned: int = Field(0, description="Active memories looked at")
    pinned: int = Field(0, description="Kept whatever their priority: a retention_reason, or importance >= 0.9")
    archived: int = 0
    expired: int = 0
    decisions: list[DecayDecision] = Field(default_factory=list, description="What was (or would be) done, first 1,000")


class ReceiptPruneReport(BaseModel):
    """What one pass of the receipts' retention removed (or, in a dry run, would remove)."""

    tenant_id: str
    dry_run: bool
    receipt_days: float | None = Field(description="The tenant's retention when the pass ran (null: kept)")
    before: datetime | None = Field(description="Receipts created before this were deleted (null: none were)")
    deleted: int = Field(0, description="Receipts deleted, or in a dry run those that would be")
