"""The OpenAPI document says what the API does: every field described (``glossary`` fills in what the models
leave out), and every error an operation can answer with, in the one error body the API really sends
(``{"error": {...}}``), in place of FastAPI's validation shape, which it never sends."""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI

from engram.api.glossary import BY_MODEL, BY_NAME

ERROR_REF = "#/components/schemas/Error"
_ERROR_DETAIL: dict[str, Any] = {
    "type": "object",
    "required": ["code", "message", "field"],
    "properties": {
        "code": {"type": "string", "description": "Stable, machine-readable: validation_error ... (docs/errors.md)"},
        "message": {"type": "string", "description": "For people: what is wrong and what is allowed"},
        "field": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "The field, header or parameter"},
        "details": {"type": "array", "description": "validation_error: every problem, not only the first", "items": {
            "type": "object", "properties": {"field": {"type": "string"}, "message": {"type": "string"},
                                             "type": {"type": "string"}}}},
        "current_revision": {"type": "integer", "description": "revision_conflict: the memory's revision now"},
        "existing_id": {"type": "string", "description": "idempotency_conflict: the memory the external_id wrote"},
        "current_id": {"anyOf": [{"type": "string"}, {"type": "null"}],
                       "description": "not_current: the memory that holds the fact now, if any"},
        "reasons": {"type": "array", "items": {"type": "string"}, "description": "policy_rejected: the reasons' codes"},
        "admission": {"type": "object", "description": "policy_rejected: the whole decision, every reason"},
        "required_role": {"type": "string", "description": "permission_denied: the least role that may"},
    },
}  # fmt: skip
_ERROR: dict[str, Any] = {
    "type": "object", "required": ["error"], "properties": {"error": {"$ref": "#/components/schemas/ErrorDetail"}},
    "description": "Every error the API answers with",
}  # fmt: skip
RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again", "schema": {"type": "integer"}}}
STATUSES: dict[int, tuple[str, dict[str, Any]]] = {
    401: ("No API key, or one that is not valid or was revoked (code unauthenticated)",
          {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}}),
    403: ("The key's role may not do this, or it is bound to another user or agent (code permission_denied)", {}),
    404: ("No such thing in this tenant, or not visible to this key (code not_found)", {}),
    409: ("A conflict: a stale revision, an external_id used for other content, or a memory no longer current", {}),
    413: ("The body is larger than ENGRAM_MAX_BODY_BYTES (code payload_too_large)", {}),
    415: ("The body is not JSON (code unsupported_media_type)", {}),
    422: ("Invalid input: the field and what is allowed (code validation_error), or refused by the admission "
          "policy (code policy_rejected)", {}),
    428: ("If-Match is required: send the revision you read (code precondition_required)", {}),
    429: ("This tenant holds its share of the database connections; retry after Retry-After (code throttled)",
          RETRY_AFTER),
    500: ("A bug: logged with its traceback on the server (code internal_error)", {}),
    502: ("The configured embedding or LLM endpoint failed (code provider_error)", {}),
    503: ("The database is unavailable or a statement ran too long (codes store_unavailable, timeout); nothing "
          "was written; retry after Retry-After", RETRY_AFTER),
}  # fmt: skip
# Request bodies as a user would send them (tests/api/test_openapi.py sends each one and expects a 2xx).
EXAMPLES: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {
    ("post", "/v1/memories"): ("A customer's preference, keyed so a later value supersedes it", {
        "content": "Invoices for ACME go out in EUR", "kind": "semantic", "fact_key": "invoice_currency",
        "user_id": "u42", "confidence": 0.9, "tags": ["billing"], "external_id": "msg-981",
        "source": {"type": "user_message", "ref": "ticket-1042"}}),
    ("post", "/v1/memories:batch"): ("Two memories, each written (or refused) on its own", {"items": [
        {"content": "The deploy window is Tuesday 14:00 UTC", "kind": "semantic", "confidence": 0.9},
        {"content": "Restarted the invoice service after error 504", "kind": "episodic", "external_id": "run-77"}]}),
    ("patch", "/v1/memories/{memory_id}"): ("Raise the importance (send If-Match: <revision>)",
                                            {"importance": 0.8, "tags": ["billing", "vip"]}),
    ("post", "/v1/recall"): ("What the agent needs before answering u42", {
        "query": "which currency do ACME invoices use?", "user_id": "u42", "max_items": 5, "max_tokens": 800}),
    ("post", "/v1/keys"): ("An agent key that acts only as user u42", {"role": "agent", "name": "support bot",
                                                                      "user_id": "u42"}),
    ("patch", "/v1/policy"): ("Hold memories above importance 0.8 for a reviewer", {"approval_importance": 0.8}),
    ("post", "/v1/memories:extract"): ("Candidates from a turn, previewed without writing", {
        "text": "user: Please send invoices in EUR from now on.", "user_id": "u42", "dry_run": True}),
    ("put", "/v1/workflows/{workflow_id}/state"): ("Where a refund workflow stands", {
        "goal": "Refund order 1042", "completed_steps": ["verified the order"], "open_questions": [],
        "blockers": ["waiting for the finance lead"]}),
    ("post", "/v1/sessions/{session_id}/turns"): ("One turn of the conversation", {
        "speaker": "user", "content": "The invoice address changed to Berlin", "user_id": "u42"}),
    ("put", "/v1/procedures/{name}"): ("How to handle a refund", {
        "description": "Refunds above 500 EUR", "steps": ["Check the order", "Ask the finance lead", "Refund"]}),
}  # fmt: skip
# Operations that answer a second success status, with the same body as their first.
ALSO: dict[tuple[str, str], tuple[str, str]] = {
    ("post", "/v1/memories"): ("200", "A replay: the same external_id with the same content wrote this before"),
    ("post", "/v1/actions"): ("200", "A replay: the same idempotency_key wrote this action before"),
    ("put", "/v1/procedures/{name}"): ("201", "The procedure's first version"),
    ("put", "/v1/workflows/{workflow_id}/state"): ("201", "The workflow's first state"),
}
# Operations whose body names memories that may not exist (404 for them too).
BODY_IDS = {("post", "/v1/relations")}
UNAUTHENTICATED = {("get", "/healthz"), ("get", "/metrics")}
WITH_PROVIDER = {("post", "/v1/memories:extract")}


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` return the documented schema (built once, then cached as FastAPI does)."""
    build = app.openapi

    def documented() -> dict[str, Any]:
        if app.openapi_schema is None or "Error" not in app.openapi_schema.get("components", {}).get("schemas", {}):
            app.openapi_schema = document(copy.deepcopy(build()))
        return app.openapi_schema

    app.openapi = documented  # type: ignore[method-assign]


def document(spec: dict[str, Any]) -> dict[str, Any]:
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas["Error"], schemas["ErrorDetail"] = _ERROR, _ERROR_DETAIL
    _describe_fields(schemas)
    for path, operations in spec.get("paths", {}).items():
        for method, op in operations.items():
            _describe_parameters(op)
            if (method, path) in EXAMPLES and "requestBody" in op:
                summary, value = EXAMPLES[(method, path)]
                media = op["requestBody"]["content"]["application/json"]
                media["examples"] = {"example": {"summary": summary, "value": value}}
            op["responses"] = {**_success(method, path, op), **_errors(method, path, op)}
    return spec


def _describe_fields(schemas: dict[str, Any]) -> None:
    # A Patch or Input model says what its full model says about the same field.
    described = {(model, field): p["description"] for model, s in schemas.items()
                 for field, p in s.get("properties", {}).items() if "description" in p}  # fmt: skip
    for model, schema in schemas.items():
        base = model.removesuffix("Patch").removesuffix("Input")
        for field, prop in schema.get("properties", {}).items():
            if "description" not in prop:
                text = BY_MODEL.get(f"{model}.{field}") or described.get((base, field)) or BY_NAME.get(field)
                if text:
                    prop["description"] = text


def _describe_parameters(op: dict[str, Any]) -> None:
    for param in op.get("parameters", []):
        if "description" not in param:
            name = param["name"].lower().replace("-", "_")
            text = {
                "if_match": "The revision you read (the ETag of GET), e.g. 3 or \"3\"",
                "memory_id": "The memory's id", "receipt_id": "The receipt's id", "key_id": "The key's id",
                "action_id": "The action's id", "limit": "At most this many items in the page",
                "cursor": "The next_cursor of the previous page", "embed": "sync (embed before answering) or "
                "deferred (queue the vectors)", "tag": "Only items with this tag (repeat for several: all must match)",
            }.get(name) or BY_NAME.get(name)  # fmt: skip
            if text:
                param["description"] = text


def _success(method: str, path: str, op: dict[str, Any]) -> dict[str, Any]:
    out = {code: r for code, r in op.get("responses", {}).items() if code.startswith(("2", "3"))}
    if (method, path) in ALSO and out:
        code, description = ALSO[(method, path)]
        out[code] = {**next(iter(out.values())), "description": description}
    return out


def _errors(method: str, path: str, op: dict[str, Any]) -> dict[str, Any]:
    codes = {422, 500, 503}  # 422: an unknown or repeated query parameter, on every route
    if (method, path) not in UNAUTHENTICATED:
        codes |= {401, 403, 429}
        if "{" in path or (method, path) in BODY_IDS:
            codes.add(404)
        if method in ("post", "put", "patch"):  # the request guard reads any body these send
            codes |= {413, 415}
        if method in ("post", "put", "patch", "delete"):
            codes.add(409)
        if any(p["name"].lower() == "if-match" for p in op.get("parameters", [])):
            codes |= {409, 428}
        if (method, path) in WITH_PROVIDER:
            codes.add(502)
    out = {}
    for code in sorted(codes):
        description, headers = STATUSES[code]
        out[str(code)] = {"description": description, "content": {"application/json": {"schema": {"$ref": ERROR_REF}}}}
        if headers:
            out[str(code)]["headers"] = headers
    return out
