"""docs/reference/rest.md, generated from the OpenAPI document: every operation with its parameters, body,
answers and errors. ``python -m engram.api.reference > docs/reference/rest.md`` writes it; a test fails when
the committed file is not what this makes."""

from __future__ import annotations

from typing import Any


def render(spec: dict[str, Any]) -> str:
    lines = [
        "# REST API reference",
        "",
        "Generated from the OpenAPI document (`python -m engram.api.reference > docs/reference/rest.md`); do not",
        "edit by hand. Every error is the body `Error` below. The same document, browsable, is at `/docs` and",
        "`/redoc` of a running server.",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            by_tag.setdefault((op.get("tags") or ["service"])[0], []).append((method, path, op))
    for tag in sorted(by_tag):
        lines += [f"## {tag.capitalize()}", ""]
        for method, path, op in by_tag[tag]:
            lines += _operation(method, path, op)
    lines += ["## Schemas", ""]
    for name, schema in sorted(spec["components"]["schemas"].items()):
        lines += _schema(name, schema)
    return "\n".join(lines).rstrip() + "\n"


def _operation(method: str, path: str, op: dict[str, Any]) -> list[str]:
    out = [f"### `{method.upper()} {path}`", "", _one_line(op.get("description") or op.get("summary", "")), ""]
    params = op.get("parameters", [])
    if params:
        out += ["| Parameter | In | Type | Meaning |", "|---|---|---|---|"]
        for p in params:
            required = " (required)" if p.get("required") else ""
            kind, meaning = _type(p.get("schema", {})), _cell(p.get("description", ""))
            out.append(f"| `{p['name']}`{required} | {p['in']} | {kind} | {meaning} |")
        out.append("")
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        out += [f"Body: {_type(body)}", ""]
    out += ["| Status | Answer | When |", "|---|---|---|"]
    for code, response in op.get("responses", {}).items():
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        answer = _type(schema) if schema else ("text" if response.get("content") else "")
        out.append(f"| {code} | {answer} | {_cell(response.get('description', ''))} |")
    return [*out, ""]


def _schema(name: str, schema: dict[str, Any]) -> list[str]:
    out = [f"### `{name}`", ""]
    if schema.get("description"):
        out += [_one_line(schema["description"]), ""]
    props = schema.get("properties", {})
    if props:
        required = set(schema.get("required", []))
        out += ["| Field | Type | Meaning |", "|---|---|---|"]
        for field, prop in props.items():
            mark = " (required)" if field in required else ""
            out.append(f"| `{field}`{mark} | {_type(prop)} | {_cell(prop.get('description', ''))}{_limits(prop)} |")
        out.append("")
    elif "enum" in schema:
        out += [f"One of: {', '.join(f'`{v}`' for v in schema['enum'])}", ""]
    return out


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    return str(schema.get("type", "any"))


def _limits(prop: dict[str, Any]) -> str:
    found = []
    for key, label in (("minLength", "min length"), ("maxLength", "max length"), ("minimum", "min"),
                       ("maximum", "max"), ("minItems", "min items"), ("maxItems", "max items")):  # fmt: skip
        if key in prop:
            found.append(f"{label} {prop[key]}")
    return f" ({', '.join(found)})" if found else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


if __name__ == "__main__":
    from engram.api import create_app

    print(render(create_app(None, run_worker=False).openapi()), end="")
