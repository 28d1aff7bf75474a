"""Procedural memory under /v1/procedures (SPEC 6.7)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from engram.api.guard import known_query
from engram.api.routes import Caller, EngramDep
from engram.model.procedure import NAME_PATTERN, Procedure, ProcedureInput

router = APIRouter(dependencies=[Depends(known_query)], tags=["procedures"])

Name = Annotated[
    str, Path(min_length=1, max_length=120, pattern=NAME_PATTERN, description="The procedure's name (billing-dispute)")
]


@router.put("/v1/procedures/{name}", response_model=Procedure)
async def put_procedure(
    name: Name, body: ProcedureInput, response: Response, engram: EngramDep, caller: Caller
) -> Procedure:
    """Write the procedure's next version: 201 when a version was written (it supersedes the one in force,
    which stays readable), 200 when the steps and description are those in force already."""
    before = await engram.procedure_versions(name, principal=caller)
    made = await engram.put_procedure(name, body, principal=caller)
    response.status_code = 201 if len(before) < made.version else 200
    return made


@router.get("/v1/procedures/{name}", response_model=Procedure)
async def get_procedure(
    name: Name,
    engram: EngramDep,
    caller: Caller,
    version: Annotated[int | None, Query(ge=1, le=100_000, description="An earlier version (1 is the first)")] = None,
) -> Procedure:
    """The version in force, or an earlier one."""
    return await engram.procedure(name, version=version, principal=caller)


@router.get("/v1/procedures/{name}/versions", response_model=list[Procedure])
async def procedure_versions(name: Name, engram: EngramDep, caller: Caller) -> list[Procedure]:
    """Every version kept, oldest first."""
    return await engram.procedure_versions(name, principal=caller)
