"""The OpenAPI document says what the API does: every field, parameter and operation described, every error
status documented with the error body the API really sends, and the examples are requests that work."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engram import Engram
from engram.api import create_app
from engram.api.openapi import EXAMPLES


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return create_app(None, run_worker=False).openapi()


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, ops in spec["paths"].items() for m, op in ops.items()]


def test_every_field_parameter_and_operation_is_described(spec: dict[str, Any]) -> None:
    missing = [f"{name}.{field}" for name, schema in spec["components"]["schemas"].items()
               for field, prop in schema.get("properties", {}).items() if not prop.get("description")]  # fmt: skip
    assert missing == [], missing
    params = [f"{m} {p} {q['name']}" for m, p, op in operations(spec) for q in op.get("parameters", [])
              if not q.get("description")]  # fmt: skip
    assert params == [], params
    assert [f"{m} {p}" for m, p, op in operations(spec) if not op.get("description")] == []


def test_limits_are_in_the_schema(spec: dict[str, Any]) -> None:
    content = spec["components"]["schemas"]["MemoryInput"]["properties"]["content"]
    assert content.get("maxLength") or any(s.get("maxLength") for s in content.get("anyOf", []))
    batch = spec["components"]["schemas"]["BatchRequest"]["properties"]["items"]
    assert batch["maxItems"] == 1000 and batch["minItems"] == 1


def test_errors_are_documented_with_the_real_body(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    assert schemas["ErrorDetail"]["required"] == ["code", "message", "field"]
    for method, path, op in operations(spec):
        errors = {code: r for code, r in op["responses"].items() if code[0] in "45"}
        assert {"500", "503"} <= set(errors), (method, path)
        if path.startswith("/v1/"):
            assert {"401", "403", "422", "429"} <= set(errors), (method, path)
        if "{" in path:
            assert "404" in errors, (method, path)
        for code, response in errors.items():
            assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
            assert response["description"], (method, path, code)
        assert "Retry-After" in errors["503"]["headers"]


async def test_every_example_is_a_request_that_works(spec: dict[str, Any], engram: Engram) -> None:
    app = create_app(engram, run_worker=False)
    key = (await engram.create_key({"role": "admin", "name": "examples"}, tenant="acme")).key
    memory = await engram.remember("Invoices for ACME go out in USD", tenant="acme")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://t", headers={"Authorization": f"Bearer {key}"}
    ) as c:
        for (method, path), (_, body) in EXAMPLES.items():
            shown = spec["paths"][path][method]["requestBody"]["content"]["application/json"]["examples"]
            assert shown["example"]["value"] == body
            url = path.format(memory_id=memory.id, workflow_id="wf-refund-1042", session_id="s-1", name="refund")
            headers = {"If-Match": "1"} if method == "patch" and "memories/" in path else {}
            r = await c.request(method.upper(), url, json=body, headers=headers)
            assert r.status_code < 300, (method, path, r.text)
