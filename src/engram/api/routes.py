"""Routes under /v1 (SPEC 9). Each passes the caller's principal to the service, which decides what it may
do; ``user_id``, ``agent_id`` and ``workflow_id`` query parameters say whom an unbound key acts as."""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Literal, TypedDict

from fastapi import APIRouter, Depends, Header, Query, Response

from engram.api.auth import get_engram, principal
from engram.api.errors import error_body
from engram.api.guard import known_query
from engram.api.schemas import BatchItemResult, BatchRequest, BatchResponse, Health, WriteResponse
from engram.errors import EngramError, PreconditionRequired, ValidationError
from engram.model import HistoryEntry, Memory, MemoryInput, MemoryPage, MemoryPatch
from engram.model.access import Principal
from engram.model.forget import DeletionCertificate
from engram.model.memory import Kind, ScopeId, Status
from engram.model.recall import RecallRequest, RecallResult, Receipt, Relation, RelationInput
from engram.service import Engram

router = APIRouter(dependencies=[Depends(known_query)])

EngramDep = Annotated[Engram, Depends(get_engram)]
Caller = Annotated[Principal, Depends(principal)]
EmbedParam = Annotated[
    Literal["sync", "deferred"],
    Query(description="sync: embed before committing (falls back to deferred if the embedder fails); "
          "deferred: commit now, embed in the background"),
]  # fmt: skip
ActingUser = Annotated[ScopeId | None, Query(description="Act as this user (a key bound to a user acts as it)")]
ActingAgent = Annotated[ScopeId | None, Query(description="Act as this agent (a key bound to an agent acts as it)")]
Reveal = Annotated[
    bool,
    Query(
        description="Show personal data in place of its placeholders (EMAIL_1, PERSON_A): admin keys, or keys "
        "created with can_reveal; each reveal is audited"
    ),
]
ActingWorkflow = Annotated[ScopeId | None, Query(description="Act within this workflow")]
IfMatch = Annotated[str | None, Header(description="The revision you read (GET returns it as ETag)")]


class ActingQuery(TypedDict):
    user_id: str | None
    agent_id: str | None
    workflow_id: str | None


def acting_as(
    user_id: ActingUser = None, agent_id: ActingAgent = None, workflow_id: ActingWorkflow = None
) -> ActingQuery:
    """Whom an unbound key acts as, from the query (the service checks it against the key's binding)."""
    return {"user_id": user_id, "agent_id": agent_id, "workflow_id": workflow_id}


ActingAs = Annotated[ActingQuery, Depends(acting_as)]


def revision_of(value: str | None, *, required: bool) -> int | None:
    if value is None:
        if required:
            raise PreconditionRequired(
                "send If-Match: <revision> with the revision you read (GET returns it as ETag)",
                field="If-Match",
            )
        return None
    match = _REVISION.fullmatch(value.strip())
    if match is None:
        raise ValidationError(
            f'If-Match must be a revision number such as 3 (or "3", as ETag gives it), got {_shown(value)!r}',
            field="If-Match",
        )
    return int(match.group(1) or match.group(2))


_REVISION = re.compile(r'(?:W/)?(?:"([1-9][0-9]{0,8})"|([1-9][0-9]{0,8}))')  # 3, "3" or W/"3"


def _shown(header: str) -> str:
    """A header value as its sender wrote it: HTTP hands it over as Latin-1, clients mostly send UTF-8."""
    try:
        return header.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return header


@router.post("/v1/memories", status_code=201, response_model=WriteResponse, tags=["memories"])
async def create_memory(
    body: MemoryInput, response: Response, engram: EngramDep, caller: Caller, embed: EmbedParam = "sync"
) -> WriteResponse:
    """Write one memory. 201 when created, 200 when an identical write is replayed."""
    result = await engram.remember(body, principal=caller, embed=embed)
    if result.replayed:
        response.status_code = 200
    response.headers["Location"] = f"/v1/memories/{result.id}"
    return WriteResponse.of(result)


@router.post("/v1/memories:batch", response_model=BatchResponse, tags=["memories"])
async def create_memories(
    body: BatchRequest, engram: EngramDep, caller: Caller, embed: EmbedParam = "sync"
) -> BatchResponse:
    """Write up to 1,000 memories. Each item is atomic on its own and reported on its own."""
    results = await engram.remember_many(body.items, principal=caller, embed=embed)
    out = [
        BatchItemResult(index=i, ok=False, error=error_body(r))
        if isinstance(r, EngramError)
        else BatchItemResult(index=i, ok=True, result=WriteResponse.of(r))
        for i, r in enumerate(results)
    ]
    ok = [o.result for o in out if o.result is not None]
    return BatchResponse(
        created=sum(1 for r in ok if not r.replayed),
        replayed=sum(1 for r in ok if r.replayed),
        failed=sum(1 for o in out if not o.ok),
        results=out,
    )


@router.get("/v1/memories/{memory_id}", response_model=Memory, tags=["memories"])
async def get_memory(
    memory_id: uuid.UUID,
    response: Response,
    engram: EngramDep,
    caller: Caller,
    acting: ActingAs,
    reveal: Reveal = False,
) -> Memory:
    """One memory: its content (personal data as placeholders unless reveal), scope, source, status and
    revision (also the ETag, to send back as If-Match)."""
    mem = await engram.get(memory_id, principal=caller, reveal=reveal, **acting)
    response.headers["ETag"] = f'"{mem.revision}"'
    return mem


@router.get("/v1/memories", response_model=MemoryPage, tags=["memories"])
async def list_memories(
    engram: EngramDep,
    caller: Caller,
    kind: Kind | None = None,
    status: Status | None = None,
    user_id: ScopeId | None = None,
    agent_id: ScopeId | None = None,
    workflow_id: ScopeId | None = None,
    session_id: ScopeId | None = None,
    fact_key: Annotated[str | None, Query(max_length=200, pattern=r"^[\w.:/@\-]+$")] = None,
    external_id: Annotated[str | None, Query(max_length=256)] = None,
    tag: Annotated[list[str], Query(description="Repeat to require several tags", max_length=64)] = [],  # noqa: B006
    contains: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="Only memories whose content holds this text (any case)"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
    reveal: Reveal = False,
) -> MemoryPage:
    """Newest first; pass next_cursor back as cursor for the next page. Unknown parameters are a 422."""
    return await engram.list(
        principal=caller,
        reveal=reveal,
        limit=limit,
        cursor=cursor,
        tags=tag,
        contains=contains,
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
    acting: ActingAs,
    if_match: IfMatch = None,
) -> Memory:
    """Change fields. Needs If-Match: <revision>; 428 without it, 409 when someone changed it first or
    the memory is no longer current."""
    expected = revision_of(if_match, required=True)
    assert expected is not None
    mem = await engram.update(memory_id, body, expected_revision=expected, principal=caller, **acting)
    response.headers["ETag"] = f'"{mem.revision}"'
    return mem


@router.post("/v1/memories/{memory_id}/archive", response_model=Memory, tags=["memories"])
async def archive_memory(
    memory_id: uuid.UUID,
    engram: EngramDep,
    caller: Caller,
    acting: ActingAs,
    if_match: IfMatch = None,
) -> Memory:
    """Take a memory out of service; it and its history stay (idempotent)."""
    return await engram.archive(
        memory_id, expected_revision=revision_of(if_match, required=False), principal=caller, **acting
    )


@router.post("/v1/memories/{memory_id}/unarchive", response_model=Memory, tags=["memories"])
async def unarchive_memory(memory_id: uuid.UUID, engram: EngramDep, caller: Caller, if_match: IfMatch = None) -> Memory:
    """Put an archived memory back in service (reviewer or admin)."""
    return await engram.unarchive(memory_id, expected_revision=revision_of(if_match, required=False), principal=caller)


@router.delete("/v1/memories/{memory_id}", response_model=DeletionCertificate, tags=["memories"])
async def delete_memory(
    memory_id: uuid.UUID, engram: EngramDep, caller: Caller, if_match: IfMatch = None
) -> DeletionCertificate:
    """Remove a memory with its vectors, postings, history, relations, the memories derived from it and the
    receipts holding copies of it (reviewer or admin); a tombstone without content stays. Answers with the
    deletion certificate: what went, table by table, and the digest the tombstone keeps."""
    return await engram.delete(memory_id, expected_revision=revision_of(if_match, required=False), principal=caller)


@router.get("/v1/memories/{memory_id}/history", response_model=list[HistoryEntry], tags=["memories"])
async def memory_history(
    memory_id: uuid.UUID,
    engram: EngramDep,
    caller: Caller,
    acting: ActingAs,
) -> list[HistoryEntry]:
    """Every revision of a memory, oldest first, each a full snapshot with who changed what."""
    return await engram.history(memory_id, principal=caller, **acting)


@router.get("/v1/memories/{memory_id}/receipts", response_model=list[Receipt], tags=["recall"])
async def memory_receipts(
    memory_id: uuid.UUID,
    engram: EngramDep,
    caller: Caller,
    acting: ActingAs,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[Receipt]:
    """The recalls that put this memory into a prompt packet, newest first: why was it used. An agent
    sees those of the user it acts as."""
    return await engram.receipts_for(memory_id, principal=caller, limit=limit, **acting)


@router.post("/v1/recall", response_model=RecallResult, tags=["recall"])
async def recall(body: RecallRequest, engram: EngramDep, caller: Caller) -> RecallResult:
    """The few memories that should enter the model's context: filtered first, ranked, fitted to
    max_items and max_tokens, with a receipt. `abstain: true` means nothing relevant was found."""
    return await engram.recall(body, principal=caller)


@router.get("/v1/receipts/{receipt_id}", response_model=Receipt, tags=["recall"])
async def get_receipt(receipt_id: uuid.UUID, engram: EngramDep, caller: Caller, user_id: ActingUser = None) -> Receipt:
    """What a recall saw, selected and why. An agent reads those of the user it acts as."""
    return await engram.receipt(receipt_id, principal=caller, user_id=user_id)


@router.post("/v1/relations", status_code=201, response_model=Relation, tags=["relations"])
async def create_relation(
    body: RelationInput,
    engram: EngramDep,
    caller: Caller,
    acting: ActingAs,
) -> Relation:
    """A typed, weighted edge between two memories (idempotent per src, dst and type)."""
    return await engram.relate(body, principal=caller, **acting)


@router.get("/healthz", response_model=Health, tags=["ops"])
async def healthz(engram: EngramDep, response: Response) -> Health:
    """Whether the server and its database answer, and how many memories wait for their vector (no key needed;
    503 when the database is down)."""
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
