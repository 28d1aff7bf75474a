"""Procedural memory (SPEC 6.7): named, versioned procedures. Each version is a ``procedural`` memory with
the fact key ``procedure:<name>``, so a new version supersedes the old through the fact chain, and every
old version stays readable."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from engram.model.rules import Input

NAME_PATTERN = r"^[A-Za-z0-9_.:@\-]{1,120}$"  # a path segment: no slash
ProcedureName = Annotated[str, Field(min_length=1, max_length=120, pattern=NAME_PATTERN)]
Step = Annotated[str, Field(min_length=1, max_length=2000)]


def fact_key(name: str) -> str:
    return f"procedure:{name}"


class ProcedureInput(Input):
    """A procedure's next version: its steps, in order, and what it is for."""

    model_config = ConfigDict(extra="forbid")

    steps: Annotated[list[Step], Field(min_length=1, max_length=100)]
    description: Annotated[str, Field(min_length=1, max_length=2000)] | None = None

    def content(self, name: str) -> str:
        """The memory's text: what recall matches and a prompt shows."""
        head = f"Procedure {name}" + (f": {self.description}" if self.description else "")
        return head + "\n" + "\n".join(f"{i}. {step}" for i, step in enumerate(self.steps, 1))


class Procedure(BaseModel):
    name: str
    version: int = Field(description="1 for the first version, counting every version kept")
    current: bool = Field(description="This is the version in force (the others are superseded)")
    id: uuid.UUID = Field(description="The memory holding this version")
    description: str | None
    steps: list[str]
    created_at: datetime
    superseded_by: uuid.UUID | None = None

    @classmethod
    def of(cls, name: str, version: int, memory: Any) -> Procedure:
        meta = memory.metadata.get("procedure", {})
        return cls(
            name=name, version=version, current=memory.status == "active", id=memory.id,
            description=meta.get("description"), steps=list(meta.get("steps", [])), created_at=memory.valid_from,
            superseded_by=memory.superseded_by,
        )  # fmt: skip
