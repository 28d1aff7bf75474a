"""A tenant's settings, which its admins may change."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from engram.model.rules import Input


class TenantSettings(BaseModel):
    tenant_id: str
    fts_config: str = Field(description="PostgreSQL text search configuration of lexical recall (a language)")
    created_at: datetime | None = Field(description="When the tenant got its first key or setting")
    memories_to_reindex: int = Field(
        description="Memories still indexed with an earlier fts_config: a change is applied in the background"
    )


class TenantPatch(Input):
    model_config = ConfigDict(extra="forbid")

    fts_config: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")] = Field(
        description="A text search configuration the database has (english, german, simple, ...): queries use "
        "it at once, and every memory of the tenant is indexed again with it in the background"
    )
