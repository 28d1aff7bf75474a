"""Extraction over REST (SPEC 4.6): text in, candidate memories out, each written through the admission
policy like any other write (or, with ``dry_run``, only screened by it)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from engram.api.errors import error_body
from engram.api.guard import known_query
from engram.api.routes import Caller, EmbedParam, EngramDep
from engram.api.schemas import WriteResponse
from engram.errors import EngramError
from engram.extraction import Candidate, Dropped, ExtractRequest
from engram.model import WriteResult
from engram.model.decision import Admission

router = APIRouter(dependencies=[Depends(known_query)], tags=["memories"])


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


@router.post("/v1/memories:extract", response_model=ExtractResponse)
async def extract_memories(
    body: ExtractRequest, engram: EngramDep, caller: Caller, embed: EmbedParam = "sync"
) -> ExtractResponse:
    """Turn a conversation turn (or `Speaker: text` lines, or a tool output; up to 32,000 characters) into
    typed candidate memories with the configured extractor, and write each through the admission policy,
    reported on its own like an item of a batch. `dry_run: true` writes nothing. 502 when the LLM fails."""
    report = await engram.extract(body, principal=caller, embed=embed)
    items = []
    for index, item in enumerate(report.items):
        error = error_body(item.result) if isinstance(item.result, EngramError) else None
        written = WriteResponse.of(item.result) if isinstance(item.result, WriteResult) else None
        ok = error is None and item.admission.decision != "reject"
        items.append(ExtractedItem(index=index, candidate=item.candidate, admission=item.admission, ok=ok,
                                   result=written, error=error))  # fmt: skip
    return ExtractResponse(
        extractor=report.extractor,
        dry_run=report.dry_run,
        created=sum(1 for i in items if i.result is not None and not i.result.replayed),
        failed=sum(1 for i in items if not i.ok),
        candidates=items,
        dropped=report.dropped,
    )
