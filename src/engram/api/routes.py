"""Routes under /v1 (SPEC 9)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Query, Response

from engram.api.auth import get_engram, principal
from engram.api.errors import error_body
from engram.api.schemas import BatchItemResult, BatchRequest, BatchResponse, Health, WriteResponse
from engram.errors import EngramError, PreconditionRequired, ValidationError
from engram.model import HistoryEntry, Memory, MemoryInput, MemoryPage, MemoryPatch
from engram.model.memory import Kind, Status
from engram.model.recall import RecallRequest, RecallResult, Receipt, Relation, RelationInput
from engram.service import Engram
from engram.store.keys import Principal

router = APIRouter()

EngramDep = Annotated[Engram, Depends(get_engram)]
Caller = Annotated[Principal, Depends(principal)]
EmbedParam = Annotated[
    Literal["sync", "deferred"],
    Query(description="sync: embed before committing (falls back to deferred if the embedder fails); "
          "deferred: commit now, embed in the background"),
]  # fmt: skip


def _revision(value: str | None, *, required: bool) -> int | None:
    if value is None:
        if required:
            raise PreconditionRequired(
                "send If-Match: <revision> with the revision you read (GET returns it as ETag)",
                field="If-Match",
            )
        return None
    raw = value.strip().removeprefix("W/").strip('"')
    if not raw.isdigit() or int(raw) < 1:
        raise ValidationError(f"If-Match must be a revision number such as 3, got {value!r}", field="If-Match")
    return int(raw)


@router.post("/v1/memories", status_code=201, response_model=WriteResponse, tags=["memories"])
async def create_memory(
    body: MemoryInput, response: Response, engram: EngramDep, caller: Caller, embed: EmbedParam = "sync"
) -> WriteResponse:
    """Write one memory. 201 when created, 200 when an identical write is replayed."""
    result = await engram.remember(body, tenant=caller.tenant_id, actor=caller.actor, embed=embed)
    if result.replayed:
        response.status_code = 200
    response.headers["Location"] = f"/v1/memories/{result.id}"
    return WriteResponse.of(result)


@router.post("/v1/memories:batch", response_model=BatchResponse, tags=["memories"])
async def create_memories(
    body: BatchRequest, engram: EngramDep, caller: Caller, embed: EmbedParam = "sync"
) -> BatchResponse:
    """Write up to 1,000 memories. Each item is atomic on its own and reported on its own."""
    results = await engram.remember_many(body.items, tenant=caller.tenant_id, actor=caller.actor, embed=embed)
    out: list[BatchItemResult] = []
    for index, r in enumerate(results):
        if isinstance(r, EngramError):
            err = error_body(r)
            if err.get("field"):
                err["field"] = f"items[{index}].{err['field']}"
            out.append(BatchItemResult(index=index, ok=False, error=err))
        else:
            out.append(BatchItemResult(index=index, ok=True, result=WriteResponse.of(r)))
    ok = [o.result for o in out if o.result is not None]
    return BatchResponse(
        created=sum(1 for r in ok if not r.replayed),
        replayed=sum(1 for r in ok if r.replayed),
        failed=sum(1 for o in out if not o.ok),
        results=out,
    )


@router.get("/v1/memories/{memory_id}", response_model=Memory, tags=["memories"])
async def get_memory(memory_id: uuid.UUID, response: Response, engram: EngramDep, caller: Caller) -> Memory:
    mem = await engram.get(memory_id, tenant=caller.tenant_id)
    response.headers["ETag"] = f'"{mem.revision}"'
    return mem


@router.get("/v1/memories", response_model=MemoryPage, tags=["memories"])
async def list_memories(
    engram: EngramDep,
    caller: Caller,
    kind: Kind | None = None,
    status: Status | None = None,
    user_id: str | None = None,
    agent_id: str | None = None,
    workflow_id: str | None = None,
    session_id: str | None = None,
    fact_key: str | None = None,
    external_id: str | None = None,
    tag: Annotated[list[str], Query(description="Repeat to require several tags")] = [],  # noqa: B006
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> MemoryPage:
    """Newest first; pass next_cursor back as cursor for the next page."""
    return await engram.list(
        tenant=caller.tenant_id,
        limit=limit,
        cursor=cursor,
        tags=tag,
        kind=kind,
        status=status,
        user_id=user_id,
        agent_id=agent_id,
        workflow_id=workflow_id,
        session_id=session_id,
        fact_key=fact_key,
        external_id=external_id,
    )


@router.patch("/v1/memories/{memory_id}", response_model=Memory, tags=["memories"])
async def update_memory(
    memory_id: uuid.UUID,
    body: MemoryPatch,
    response: Response,
    engram: EngramDep,
    caller: Caller,
    if_match: Annotated[str | None, Header(description="The revision you read")] = None,
) -> Memory:
    """Change fields. Needs If-Match: <revision>; 428 without it, 409 when someone changed it first."""
    expected = _revision(if_match, required=True)
    assert expected is not None
    mem = await engram.update(memory_id, body, expected_revision=expected, tenant=caller.tenant_id, actor=caller.actor)
    response.headers["ETag"] = f'"{mem.revision}"'
    return mem


@router.post("/v1/memories/{memory_id}/archive", response_model=Memory, tags=["memories"])
async def archive_memory(
    memory_id: uuid.UUID,
    engram: EngramDep,
    caller: Caller,
    if_match: Annotated[str | None, Header()] = None,
) -> Memory:
    return await engram.archive(
        memory_id,
        expected_revision=_revision(if_match, required=False),
        tenant=caller.tenant_id,
        actor=caller.actor,
    )


@router.delete("/v1/memories/{memory_id}", status_code=204, tags=["memories"])
async def delete_memory(
    memory_id: uuid.UUID,
    engram: EngramDep,
    caller: Caller,
    if_match: Annotated[str | None, Header()] = None,
) -> Response:
    await engram.delete(
        memory_id,
        expected_revision=_revision(if_match, required=False),
        tenant=caller.tenant_id,
        actor=caller.actor,
    )
    return Response(status_code=204)


@router.get("/v1/memories/{memory_id}/history", response_model=list[HistoryEntry], tags=["memories"])
async def memory_history(memory_id: uuid.UUID, engram: EngramDep, caller: Caller) -> list[HistoryEntry]:
    return await engram.history(memory_id, tenant=caller.tenant_id)


@router.get("/v1/memories/{memory_id}/receipts", response_model=list[Receipt], tags=["recall"])
async def memory_receipts(memory_id: uuid.UUID, engram: EngramDep, caller: Caller) -> list[Receipt]:
    """The recalls that put this memory into a prompt packet, newest first: why was it used."""
    return await engram.receipts_for(memory_id, tenant=caller.tenant_id)


@router.post("/v1/recall", response_model=RecallResult, tags=["recall"])
async def recall(body: RecallRequest, engram: EngramDep, caller: Caller) -> RecallResult:
    """The few memories that should enter the model's context: filtered first, ranked, fitted to
    max_items and max_tokens, with a receipt. `abstain: true` means nothing relevant was found."""
    return await engram.recall(body, tenant=caller.tenant_id, actor=caller.actor)


@router.get("/v1/receipts/{receipt_id}", response_model=Receipt, tags=["recall"])
async def get_receipt(receipt_id: uuid.UUID, engram: EngramDep, caller: Caller) -> Receipt:
    return await engram.receipt(receipt_id, tenant=caller.tenant_id)


@router.post("/v1/relations", status_code=201, response_model=Relation, tags=["relations"])
async def create_relation(body: RelationInput, engram: EngramDep, caller: Caller) -> Relation:
    """A typed, weighted edge between two memories (idempotent per src, dst and type)."""
    return await engram.relate(body, tenant=caller.tenant_id, actor=caller.actor)


@router.get("/healthz", response_model=Health, tags=["ops"])
async def healthz(engram: EngramDep, response: Response) -> Health:
    try:
        backlog: int | None = await engram.embedding_backlog()
        database = "ok"
    except EngramError as exc:
        backlog, database = None, f"unavailable: {exc.message}"
        response.status_code = 503
    return Health(
        status="ok" if database == "ok" else "degraded",
        database=database,
        embedding_model=engram.model_id,
        embedding_backlog=backlog,
    )
