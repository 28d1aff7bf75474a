"""One table from exception class to HTTP status, and the JSON error body every error uses:
``{"error": {"code": ..., "message": ..., "field": ...}}``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engram import errors as e
from engram.model.validation import describe, field_path, headline

_log = logging.getLogger(__name__)

STATUS: list[tuple[type[e.EngramError], int]] = [
    (e.ValidationError, 422),
    (e.PolicyRejection, 422),
    (e.NotFoundError, 404),
    (e.ConflictError, 409),
    (e.PreconditionRequired, 428),
    (e.AuthenticationError, 401),
    (e.PermissionDenied, 403),
    (e.Throttled, 429),
    (e.StoreUnavailable, 503),
    (e.MigrationError, 503),
    (e.VaultLocked, 503),
    (e.ConfigurationError, 503),
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
        if exc.admission is not None:
            body["admission"] = exc.admission
    if isinstance(exc, e.NotCurrent):
        body["current_id"] = exc.current_id
    if isinstance(exc, e.PermissionDenied) and exc.required_role:
        body["required_role"] = exc.required_role
    return body


def headers_for(exc: e.EngramError) -> dict[str, str] | None:
    if isinstance(exc, e.AuthenticationError):
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, e.Throttled | e.StoreUnavailable):
        return {"Retry-After": str(exc.retry_after)}
    return None


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
    message = headline(first["field"], first["message"])
    if len(details) > 1:
        message += f" (and {len(details) - 1} more)"
    return e.ValidationError(message, field=first["field"], details=details)


def install(app: FastAPI) -> None:
    @app.exception_handler(e.EngramError)
    async def _engram(_: Request, exc: e.EngramError) -> JSONResponse:
        return JSONResponse({"error": error_body(exc)}, status_code=status_for(exc), headers=headers_for(exc))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug, not the caller's fault: logged with its traceback, answered in the same JSON shape.
        _log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        body = {"code": "internal_error", "message": "an unexpected error occurred; it has been logged", "field": None}
        return JSONResponse({"error": body}, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": error_body(_request_validation(exc))}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # FastAPI could not parse the body (bad encoding, nesting, huge numbers)
            body = e.ValidationError(f"the body cannot be read as JSON: {exc.detail}", field="body")
            return JSONResponse({"error": error_body(body)}, status_code=422)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = {
            404: f"no route {request.url.path} (the API lives under /v1; see /docs)",
            405: f"{request.method} is not allowed on {request.url.path}",
        }.get(exc.status_code, str(exc.detail))
        return JSONResponse(
            {"error": {"code": code, "message": message, "field": None}},
            status_code=exc.status_code,
            headers=exc.headers,
        )
