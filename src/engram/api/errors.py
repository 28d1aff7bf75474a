"""One table from exception class to HTTP status, and the JSON error body every error uses:
``{"error": {"code": ..., "message": ..., "field": ...}}``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engram import errors as e
from engram.model.validation import describe, field_path

STATUS: list[tuple[type[e.EngramError], int]] = [
    (e.ValidationError, 422),
    (e.PolicyRejection, 422),
    (e.NotFoundError, 404),
    (e.ConflictError, 409),
    (e.PreconditionRequired, 428),
    (e.AuthenticationError, 401),
    (e.PermissionDenied, 403),
    (e.StoreUnavailable, 503),
    (e.MigrationError, 503),
    (e.ProviderError, 502),
    (e.EngramError, 500),
]


def status_for(exc: e.EngramError) -> int:
    return next(code for cls, code in STATUS if isinstance(exc, cls))


def error_body(exc: e.EngramError) -> dict[str, Any]:
    body: dict[str, Any] = exc.to_dict()
    if isinstance(exc, e.ValidationError) and exc.details:
        body["details"] = exc.details
    if isinstance(exc, e.RevisionConflict):
        body["current_revision"] = exc.current_revision
    if isinstance(exc, e.IdempotencyConflict):
        body["existing_id"] = exc.existing_id
    if isinstance(exc, e.PolicyRejection):
        body["reasons"] = exc.reasons
    return body


def _request_validation(exc: RequestValidationError) -> e.ValidationError:
    details = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        if loc and loc[0] in ("body", "query", "path", "header"):
            where = loc.pop(0)
            if err.get("type") == "json_invalid":
                loc = []
            elif where == "header":
                loc = [str(x).replace("_", "-").title() for x in loc]
        details.append({"field": field_path(loc), "message": describe(err), "type": str(err.get("type"))})
    first = details[0] if details else {"field": "body", "message": "invalid request"}
    if first["message"] == "JSON decode error":
        first["message"] = "the body is not valid JSON: " + str(exc.errors()[0].get("ctx", {}).get("error", ""))
    message = f"{first['field']}: {first['message']}"
    if len(details) > 1:
        message += f" (and {len(details) - 1} more)"
    return e.ValidationError(message, field=first["field"], details=details)


def install(app: FastAPI) -> None:
    @app.exception_handler(e.EngramError)
    async def _engram(_: Request, exc: e.EngramError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, e.AuthenticationError) else None
        return JSONResponse({"error": error_body(exc)}, status_code=status_for(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": error_body(_request_validation(exc))}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(
            {"error": {"code": code, "message": str(exc.detail), "field": None}}, status_code=exc.status_code
        )
