"""Embedding model migration (SPEC 6.6): where one stands."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ReembedStatus(BaseModel):
    from_model: str | None = Field(None, description="The model reads used before")
    to_model: str | None = Field(None, description="The model being built (or built)")
    state: str = Field(description="none, building, switched (reads use the new model; old vectors going) or done")
    queued: int = Field(0, description="Memories still waiting for their new vector")
    failing: int = Field(0, description="Of those, how many failed five times or more")
    last_error: str | None = None
    embedded: int = Field(0, description="New vectors this run stored")
    dropped_vectors: int = Field(0, description="Old vectors this run removed")
    dropped_indexes: list[str] = Field(default_factory=list)
