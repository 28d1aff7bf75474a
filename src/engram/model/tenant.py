"""A tenant's settings, which its admins may change."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram.model.memory import SourceType
from engram.model.rules import Input

# How far recall trusts what each kind of source says (0..1), joined with a memory's own confidence in its
# ranking (see docs/retrieval.md): observed beats reported beats inferred.
DEFAULT_SOURCE_TRUST: dict[str, float] = {
    "system_event": 1.0, "tool_result": 1.0, "human_note": 0.9, "document": 0.85, "user_message": 0.8,
    "agent_inference": 0.5,
}  # fmt: skip
Trust = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


def source_trust(stored: dict[str, float] | None) -> dict[str, float]:
    """A tenant's trust priors: the defaults, with what it set."""
    return {**DEFAULT_SOURCE_TRUST, **(stored or {})}


class TenantSettings(BaseModel):
    tenant_id: str
    fts_config: str = Field(description="PostgreSQL text search configuration of lexical recall (a language)")
    created_at: datetime | None = Field(description="When the tenant got its first key or setting")
    memories_to_reindex: int = Field(
        description="Memories still indexed with an earlier fts_config: a change is applied in the background"
    )
    source_trust: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SOURCE_TRUST),
        description="Recall's trust prior per source type (0..1), joined with each memory's confidence",
    )


class TenantPatch(Input):
    model_config = ConfigDict(extra="forbid")

    fts_config: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")] | None = Field(
        None,
        description="A text search configuration the database has (english, german, simple, ...): queries use "
        "it at once, and every memory of the tenant is indexed again with it in the background",
    )
    source_trust: dict[SourceType, Trust] | None = Field(
        None,
        description="Trust priors to change, by source type (0..1); the types not named keep theirs. Recall "
        "follows at once in this process, within 30 seconds in others",
    )

    @model_validator(mode="after")
    def _something(self) -> TenantPatch:
        if self.fts_config is None and self.source_trust is None:
            raise ValueError("name at least one setting to change: fts_config, source_trust")
        return self
