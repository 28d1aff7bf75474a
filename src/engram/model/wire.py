"""Shapes of the REST API's answers that are not domain types, here so that `engram.client` can read them
without importing the server."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from engram.model.decision import Admission
from engram.model.extraction import Candidate, Dropped
from engram.model.memory import Status, WriteResult


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


class VaultRotation(BaseModel):
    resealed: int = Field(description="Vault values sealed again under the current key")


class ScheduledRun(BaseModel):
    job: str
    next_run_at: datetime
    leased_until: datetime | None
    runs: int
    last_started_at: datetime | None
    last_finished_at: datetime | None
    last_result: dict[str, Any] | None
    last_error: str | None


class ExtractedItem(BaseModel):
    index: int
    candidate: Candidate = Field(description="As admission leaves it: a secret is redacted")
    admission: Admission = Field(description="The write's decision; in a dry run, the policy's preview")
    ok: bool = Field(description="Written (or, in a dry run, would be admitted)")
    result: WriteResponse | None = Field(default=None, description="The write's answer (not in a dry run)")
    error: dict[str, Any] | None = Field(default=None, description="Why the write was refused")


class ExtractResponse(BaseModel):
    extractor: str = Field(description="rules, or llm:<model>")
    dry_run: bool
    created: int
    failed: int
    candidates: list[ExtractedItem]
    dropped: list[Dropped] = Field(description="What the extractor proposed that was not valid, and why")


class RescanReport(BaseModel):
    scanned: int = Field(description="Active memories checked in this call")
    redacted: int = Field(description="Memories whose secrets were redacted (a new revision, embedded again)")
    masked: int = Field(0, description="Memories whose personal data became placeholders (a new revision)")
    quarantined: int = Field(description="Memories the policy now quarantines or refuses: quarantined")
    next_cursor: str | None = Field(description="Pass back as cursor to go on; null when every memory is done")
