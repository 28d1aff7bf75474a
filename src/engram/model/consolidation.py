"""Consolidation's request and report (SPEC 6.4)."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from engram.model.memory import ScopeId


class ConsolidationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent_id: ScopeId | None = Field(None, description="Whose episodes (none: those written without an agent)")
    min_episodes: Annotated[int, Field(ge=2, le=100)] = Field(
        3,
        description="How often the same thing must have been said (episodes and the repeats merged into them) "
        "before it becomes a fact",
    )
    dry_run: bool = Field(False, description="Report the groups without writing anything")


class ConsolidatedFact(BaseModel):
    id: uuid.UUID | None = Field(None, description="The fact (None in a dry run)")
    content: str
    user_id: str | None
    evidence: list[uuid.UUID] = Field(description="The episodes it derives from")
    outcome: str = Field(
        description="created, superseded_previous (a new version of the group's fact), evidence_updated (the "
        "same statement on more evidence: a new revision), unchanged, dry_run, or refused: why"
    )


class ConsolidationReport(BaseModel):
    tenant_id: str
    agent_id: str | None
    skipped_locked: bool = Field(description="Another consolidation of this tenant and agent was running")
    episodes: int = Field(0, description="Active episodes considered")
    groups: int = Field(0, description="Groups of at least min_episodes")
    created: int = Field(0, description="Facts written now")
    superseded: int = Field(0, description="Earlier facts superseded by them")
    links_added: int = Field(0, description="derived_from relations added")
    facts: list[ConsolidatedFact] = Field(default_factory=list)
