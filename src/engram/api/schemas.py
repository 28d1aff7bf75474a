"""Wire shapes that are not domain types."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field

from engram.model import WriteResult
from engram.model.decision import Admission
from engram.model.memory import Status


class WriteResponse(BaseModel):
    id: uuid.UUID
    revision: int
    status: Status
    replayed: bool
    reasons: list[str]
    supersedes: list[uuid.UUID] = Field(default_factory=list)
    embedded: bool
    admission: Admission = Field(description="How the admission policy decided, with every reason")

    @classmethod
    def of(cls, r: WriteResult) -> WriteResponse:
        return cls(
            id=r.id,
            revision=r.revision,
            status=r.status,
            replayed=r.replayed,
            reasons=r.reasons,
            supersedes=r.supersedes,
            embedded=r.embedded,
            admission=r.admission,
        )


class BatchRequest(BaseModel):
    # Items stay raw JSON here (not even objects yet) so that one bad item is reported on its own instead of
    # failing the request.
    items: list[Any] = Field(
        min_length=1, max_length=1000, description="Memories to write, each shaped as the body of POST /v1/memories"
    )


class BatchItemResult(BaseModel):
    index: int
    ok: bool
    result: WriteResponse | None = None
    error: dict[str, Any] | None = None


class BatchResponse(BaseModel):
    created: int
    replayed: int
    failed: int
    results: list[BatchItemResult]


class Health(BaseModel):
    status: str
    database: str
    embedding_model: str | None
    embedding_backlog: int | None
