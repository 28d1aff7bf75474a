"""Extraction over REST (SPEC 4.6): text in, candidate memories out, each written through the admission
policy like any other write (or, with ``dry_run``, only screened by it)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from engram.api.errors import error_body
from engram.api.guard import known_query
from engram.api.routes import Caller, EmbedParam, EngramDep
from engram.errors import EngramError
from engram.extraction import ExtractRequest
from engram.model import WriteResult
from engram.model.wire import ExtractedItem, ExtractResponse, WriteResponse

router = APIRouter(dependencies=[Depends(known_query)], tags=["memories"])


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
