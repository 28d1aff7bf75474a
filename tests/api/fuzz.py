"""Generated requests for the property-based API tests (``test_properties.py``).

Every request starts as a schemathesis case drawn by hypothesis from the app's own OpenAPI schema
(``app.openapi()``), in positive mode (valid by the schema) or negative mode (violating it). Laid over it: hostile
values (NUL characters, lone surrogates, odd timestamps, huge numbers, deep JSON, non-ASCII digits...) in its
body, query and If-Match header; the caller (a key of each role, a bound key, a key of another tenant, or a
broken Authorization header); and whether each id in the path or body names a real memory (live, archived,
deleted, superseded, of another tenant), receipt or key.

The cases are collected by a synchronous ``@given`` function (hypothesis cannot drive the async test itself,
and the service is bound to pytest's session event loop), seeded per route; the overlays come from a
``random.Random`` seeded per route and case. Every run therefore sends the same requests; the test sends them
one by one over ``httpx.ASGITransport`` inside its own event loop. Nothing is shrunk: a failure report keeps,
for each distinct cause, the smallest request that showed it.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import random
import re
import traceback
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable

from engram.api import create_app

# Examples per route. To explore further than CI does: ENGRAM_FUZZ_EXAMPLES=500, and ENGRAM_FUZZ_SEED=<anything>
# for other requests than the default ones.
EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "40"))
SEED = os.environ.get("ENGRAM_FUZZ_SEED", "")

SPEC: dict[str, Any] = create_app(None, run_worker=False).openapi()
SCHEMA = schemathesis.openapi.from_dict(SPEC)
COMPONENTS: dict[str, Any] = SPEC.get("components", {}).get("schemas", {})
MEMORY_INPUT = COMPONENTS["MemoryInput"]
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


# --- values no schema would suggest -----------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text put into a body verbatim: what ``json.dumps`` cannot (or should not) produce."""

    text: str
    label: str

    def __repr__(self) -> str:
        return f"Raw({self.label})"


@dataclass(frozen=True)
class RawQuery:
    """A query value sent exactly as written (already percent-encoded, possibly not valid UTF-8)."""

    encoded: str

    def __repr__(self) -> str:
        return f"RawQuery({self.encoded!r})"


def deep_object(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def deep_object_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def deep_array_text(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE_STRINGS: list[Any] = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\ufeff",
    "\u202e\u200b",
    "\r\n",
    "x" * 13_000,
    "\U0001f600" * 3_000,
    "\u00b2",  # superscript two: isdigit() but not a number int() takes
    "\u0663",  # Arabic-Indic three
    "\uff11\uff12",  # fullwidth digits
    "' OR 1=1 --",
    "%00",
    "\\u0000",
    "null",
    "NaN",
    "../../etc/passwd",
]

HOSTILE_TIMES: list[Any] = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "2024-01-01T00:00:00+16:00",
    "2024-01-01T00:00:00-23:59",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999Z",
    "0000-01-01T00:00:00Z",
    "2024-02-30T00:00:00Z",
    "2024-01-01T24:00:00Z",
    "2016-12-31T23:59:60Z",
    "2024-01-01",
    "2024-01-01T00:00:00",
    "10000-01-01T00:00:00Z",
    "-0001-01-01T00:00:00Z",
    "2024-01-01T00:00:00.123456789Z",
    "\uff12\uff10\uff12\uff14-01-01T00:00:00Z",
    "99999999999",
    1e20,
    -1e20,
    253402300800,
    -62135596801,
    Raw("1e999", "1e999"),
]

HOSTILE_NUMBERS: list[Any] = [
    Raw("NaN", "NaN"),
    Raw("Infinity", "Infinity"),
    Raw("-Infinity", "-Infinity"),
    Raw("1e999", "1e999"),
    Raw("1" + "0" * 5000, "10**5000"),
    1e308,
    -1e308,
    5e-324,
    -0.0,
    2**31,
    2**53 + 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**40,
    True,
    -1,
    0,
]

HOSTILE_SHAPES: list[Any] = [
    None,
    [],
    {},
    [None],
    {"": None},
    {"\x00": 1},
    {"a": "\x00"},
    {"\ud800": "\udc00"},
    ["\x00", "\ud800"],
    {"k" * 1000: "v"},
    {f"k{i}": i for i in range(3000)},
    deep_object(7),
    deep_object(9),
    deep_object(64),
    Raw(deep_object_text(900), "object nested 900 deep"),
    Raw(deep_object_text(5000), "object nested 5000 deep"),
    Raw(deep_array_text(900), "array nested 900 deep"),
    {"big": Raw("1" + "0" * 400, "10**400")},
    {"big": 2**64},
    {"nan": Raw("NaN", "NaN")},
    {"f": 1e308, "g": -1e308},
]

HOSTILE = HOSTILE_STRINGS + HOSTILE_TIMES + HOSTILE_NUMBERS + HOSTILE_SHAPES

HOSTILE_QUERY: list[Any] = [
    "",
    "\x00",
    RawQuery("%00"),
    RawQuery("%ED%A0%80"),  # a lone surrogate as CESU-8
    RawQuery("%FF%FE"),
    RawQuery("%"),
    RawQuery("%zz"),
    "\u00b2",
    "\u0663",
    "-1",
    "0",
    "501",
    "99999999999999999999",
    "1e3",
    "NaN",
    " 7",
    "x" * 5000,
    "u1",
    "'",
    "a&b=c",
    "\u202e",
    "\U0001f642",
]

HOSTILE_IF_MATCH: list[Any] = [
    "0",
    "-1",
    "\u00b2",
    "\u0663",
    "\uff11",
    "1" * 10,
    "999999999",
    "*",
    '"',
    "W/",
    'W/""',
    "1, 2",
    " 1 ",
    "\t1",
    "",
    "0x1",
    "1.0",
    "+1",
    b"\xff",
    b"\xb2",
    b"1\x00",
    "\ud800".encode("utf-8", "surrogatepass"),
]
VALID_IF_MATCH = ["1", '"1"', 'W/"1"', "2", '"2"']

# Authorization headers that are not a good key; "{key}" stands for the caller's real key.
HOSTILE_AUTH: list[Any] = [
    "",
    "Bearer",
    "Bearer ",
    "bearer {key}",
    "Bearer  {key}",
    "{key}",
    "Bearer {key}x",
    "Bearer {key}\u00b2",
    "Basic Zm9vOmJhcg==",
    "Bearer egm_" + "x" * 10_000,
    "Bearer egm_\u00b2",
    b"Bearer \x00",
    b"Bearer \xff\xfe",
    "Bearer " + "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
]

CALLERS = ["agent", "agent", "reviewer", "reviewer", "admin", "admin", "bound", "foreign", "generated"]
MEMORY_TOKENS = [
    "generated", "shared", "fresh", "fresh", "fresh", "archived", "deleted", "superseded", "foreign", "held",
]  # fmt: skip
ID_TOKENS: dict[str, list[str]] = {
    "memory_id": MEMORY_TOKENS,
    "receipt_id": ["generated", "receipt", "receipt", "foreign_receipt"],
    "key_id": ["generated", "spare", "spare", "own", "foreign_key"],
    "workflow_id": ["generated", "workflow", "workflow"],
    "action_id": ["generated", "action", "dead_action", "foreign_action"],
    "name": ["generated", "procedure", "procedure"],
}
# Values that pass the checks a schema cannot express, so that generated requests also succeed.
GOOD_VALUES: dict[str, dict[tuple[Any, ...], list[Any]]] = {
    "PATCH /v1/tenant": {("fts_config",): ["simple", "english", "german"]},
    "POST /v1/memories": {("content",): ["Customer prefers email", "Deploy on Tuesdays"], ("user_id",): ["u1"]},
    "PATCH /v1/memories/{memory_id}": {("content",): ["Deploy on Wednesdays"]},
    "POST /v1/recall": {("query",): ["deploy window", "how does the customer want the report"], ("user_id",): ["u1"]},
    "POST /v1/relations": {("type",): ["related", "supports"]},
    "POST /v1/actions": {("url",): ["http://127.0.0.1:9/hook"], ("handler",): ["webhook"]},
    "POST /v1/sessions/{session_id}/turns": {("content",): ["I prefer email", "The deploy failed"]},
}
CLEAN_TOKENS = {
    "memory_id": ["fresh", "shared"], "receipt_id": ["receipt"], "key_id": ["spare"], "workflow_id": ["workflow"],
    "action_id": ["action"], "name": ["procedure"],
}  # fmt: skip
ACTING = [None, None, {"user_id": "u1"}, {"user_id": "u1"}, {"user_id": "u1", "agent_id": "a1"}, {"user_id": "u2"}]


# --- the operations of the schema ---------------------------------------------------------------------------


def resolve(schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _variants(schema: Any) -> list[Any]:
    schema = resolve(schema)
    if isinstance(schema, dict) and "anyOf" in schema:
        return [resolve(s) for s in schema["anyOf"] if resolve(s).get("type") != "null"]
    return [schema]


def field_paths(schema: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Where a hostile value can go in a body of this schema: every property, nested objects, array items."""
    out: list[tuple[Any, ...]] = []
    for variant in _variants(schema):
        if not isinstance(variant, dict):
            continue
        if variant.get("type") == "object" or "properties" in variant:
            props = variant.get("properties", {})
            for name, sub in props.items():
                out.append((*prefix, name))
                if depth < 2:
                    out += field_paths(sub, (*prefix, name), depth + 1)
            if variant.get("additionalProperties") is True or not props:
                out.append((*prefix, "x"))
        elif variant.get("type") == "array" and depth < 2:
            out.append((*prefix, 0))
            items = variant.get("items", {})
            if prefix == ("items",):  # the batch: its items are memories, whatever the schema says
                items = MEMORY_INPUT
            out += field_paths(items, (*prefix, 0), depth + 1)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    api: Any  # schemathesis APIOperation
    query: tuple[str, ...]
    path_params: tuple[str, ...]
    headers: tuple[str, ...]
    body_paths: tuple[tuple[Any, ...], ...]
    uuid_fields: tuple[str, ...]  # body fields that name a memory

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def has_body(self) -> bool:
        return "requestBody" in SPEC["paths"][self.path][self.method.lower()]


def _operation(api: Any) -> Operation:
    spec = SPEC["paths"][api.path][api.method.lower()]
    params = spec.get("parameters", [])
    body_schema: Any = {}
    if "requestBody" in spec:
        body_schema = spec["requestBody"]["content"]["application/json"]["schema"]
    props = resolve(body_schema).get("properties", {}) if body_schema else {}
    return Operation(
        method=api.method.upper(),
        path=api.path,
        api=api,
        query=tuple(p["name"] for p in params if p["in"] == "query"),
        path_params=tuple(p["name"] for p in params if p["in"] == "path"),
        headers=tuple(p["name"] for p in params if p["in"] == "header"),
        body_paths=tuple(field_paths(body_schema)) if body_schema else (),
        uuid_fields=tuple(n for n, s in props.items() if resolve(s).get("format") == "uuid"),
    )


OPERATIONS: dict[str, Operation] = {
    op.label: op for op in (_operation(result.ok()) for result in SCHEMA.get_all_operations())
}
BODY_OPERATIONS = [label for label, op in OPERATIONS.items() if op.method in ("POST", "PATCH", "PUT")]


# --- plans: a generated request before its ids and caller are resolved ----------------------------------------


@dataclass
class Plan:
    op: Operation
    mode: str
    path_params: dict[str, Any]
    path_tokens: dict[str, str]
    query: list[tuple[str, Any]]
    headers: dict[str, Any]
    generated_auth: Any
    caller: str
    auth: Any  # None: the caller's key; else a value of HOSTILE_AUTH
    body: Any  # NOT_SET: no body
    media_type: str | None
    body_tokens: dict[str, str]


def _flatten_query(query: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for name, value in (query or {}).items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if v is None:
                continue
            out.append((str(name), v))
    return out


def set_path(body: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``body`` with ``value`` at ``path`` (dict keys and list indexes), creating what is missing."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = body if isinstance(body, list) else []
        if not items:
            items = [{}]
        items[0] = set_path(items[0], rest, value)
        return items
    container = body if isinstance(body, dict) else {}
    container[head] = set_path(container.get(head), rest, value)
    return container


def collect_cases(label: str, mode: str, examples: int) -> list[Any]:
    """Up to ``examples`` distinct schemathesis cases of one operation in one mode, the same on every run."""
    op = OPERATIONS[label]
    out: dict[str, Any] = {}

    @seed(zlib.crc32(f"{SEED}{label} {mode}".encode()))
    @settings(
        max_examples=examples * 5 // 4 + 2,  # a few more: duplicates are dropped
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(op.api.as_strategy(generation_mode=schemathesis.GenerationMode(mode)))
    def collect(case: Any) -> None:
        key = repr((case.path_parameters, case.query, dict(case.headers or {}), case.body, case.media_type))
        out.setdefault(key, case)

    if examples == 0:
        return []
    try:
        collect()
    except Unsatisfiable:  # nothing in the operation can be made invalid (GET /healthz takes no input)
        return []
    return list(out.values())[:examples]


def collect_plans(label: str, examples: int = EXAMPLES) -> list[Plan]:
    """``examples`` requests for one operation, the same ones on every run.

    The cases are generated by hypothesis through schemathesis; what is laid over each one (caller, ids,
    hostile values) is chosen by a ``random.Random`` seeded with the operation and the case's index, so that
    these choices are spread evenly (hypothesis leans to the first of a list, which would be one role only).
    """
    op = OPERATIONS[label]
    rnds = [random.Random(f"{SEED}{label} {i}") for i in range(examples)]
    wanted = [rnd.choice(["positive", "negative"]) for rnd in rnds]
    cases = {mode: collect_cases(label, mode, wanted.count(mode)) for mode in ("positive", "negative")}
    memories = collect_cases("POST /v1/memories", "positive", 20) if op.path == "/v1/memories:batch" else []
    used = {"positive": 0, "negative": 0}
    out: list[Plan] = []
    for mode, rnd in zip(wanted, rnds, strict=True):
        if not cases[mode]:  # nothing in the operation can be made invalid: a valid case instead
            mode = "positive"
        case = cases[mode][used[mode] % len(cases[mode])]  # used again (with other choices) if too few
        used[mode] += 1
        out.append(plan(op, mode, case, rnd, memories))
    return out


def plan(op: Operation, mode: str, case: Any, rnd: random.Random, memories: list[Any]) -> Plan:
    """A generated case with the choices around it: caller, ids, and hostile values in its query, headers and
    body. A third of the positive cases go in clean (real ids, a caller that may, no hostile values), so that
    the routes' success paths run as well as their refusals."""
    clean = mode == "positive" and rnd.random() < 0.35
    headers = dict(case.headers or {})
    generated_auth = headers.pop("Authorization", None)
    query = _flatten_query(case.query)
    if "user_id" in op.query:
        acting = {"user_id": "u1"} if clean else rnd.choice(ACTING)
        if clean:
            query = [(k, v) for k, v in query if k not in ("user_id", "agent_id", "workflow_id")]
        if acting:
            query = [(k, v) for k, v in query if k not in acting] + list(acting.items())
    if not clean and rnd.random() < 0.25:
        for _ in range(rnd.randint(1, 2)):
            name, value = rnd.choice([*op.query, "unknown"]), rnd.choice(HOSTILE_QUERY)
            query = [(k, v) for k, v in query if k != name] + [(name, value)]
    if "if-match" in op.headers:
        choice = "valid" if clean else rnd.choice(["generated", "valid", "valid", "hostile", "absent"])
        headers = {k: v for k, v in headers.items() if k.lower() != "if-match"}
        if choice == "valid":
            headers["If-Match"] = rnd.choice(VALID_IF_MATCH[:3] if clean else VALID_IF_MATCH)
        elif choice == "hostile":
            headers["If-Match"] = rnd.choice(HOSTILE_IF_MATCH)
        elif choice == "generated" and case.headers:
            headers.update({k: v for k, v in case.headers.items() if k.lower() == "if-match"})
    caller = rnd.choice(["agent", "reviewer", "admin"] if clean else CALLERS)
    auth = rnd.choice(HOSTILE_AUTH) if not clean and caller != "generated" and rnd.random() < 0.1 else None
    clean_tokens = {**CLEAN_TOKENS, "memory_id": ["fresh"]} if op.method != "GET" else CLEAN_TOKENS  # known revision
    if op.path.startswith("/v1/approvals/"):
        clean_tokens = {**CLEAN_TOKENS, "memory_id": ["held"]}  # what awaits a decision
    if op.path.endswith("/retry"):
        clean_tokens = {**CLEAN_TOKENS, "action_id": ["dead_action"]}  # only a dead action is sent again
    path_tokens = {
        name: rnd.choice(clean_tokens.get(name, ["generated"]) if clean else ID_TOKENS.get(name, ["generated"]))
        for name in op.path_params
    }
    body = case.body
    body_tokens: dict[str, str] = {}
    if memories and mode == "positive" and rnd.random() < 0.7:  # a batch of memories valid by their schema
        body = {"items": [c.body for c in rnd.sample(memories, min(len(memories), rnd.randint(1, 4)))]}
    if op.has_body and isinstance(body, dict):
        body = json.loads(json.dumps(body))  # a copy that hostile values can go into
        if op.method == "PATCH" and (clean or rnd.random() < 0.5):  # null clears only some fields: leave it out
            body = {k: v for k, v in body.items() if v is not None} or {"importance": 0.3}
        for path, values in GOOD_VALUES.get(op.label, {}).items():
            if clean or rnd.random() < 0.5:
                body = set_path(body, path, rnd.choice(values))
        for name in op.uuid_fields:
            body_tokens[name] = rnd.choice(CLEAN_TOKENS["memory_id"] if clean else MEMORY_TOKENS)
        if not clean and op.body_paths and rnd.random() < 0.4:
            for _ in range(rnd.randint(1, 3)):
                body = set_path(body, rnd.choice(op.body_paths), copy.deepcopy(rnd.choice(HOSTILE)))
    return Plan(
        op=op,
        mode=mode,
        path_params=dict(case.path_parameters or {}),
        path_tokens=path_tokens,
        query=query,
        headers=headers,
        generated_auth=generated_auth,
        caller=caller,
        auth=auth,
        body=body,
        media_type=case.media_type,
        body_tokens=body_tokens,
    )


# --- requests on the wire ----------------------------------------------------------------------------------


@dataclass
class Request:
    method: str
    url: str  # path and query, as sent
    headers: list[tuple[bytes, bytes]]
    content: bytes | None
    caller: str  # what the Authorization header holds, for the report
    notes: list[str] = field(default_factory=list)  # what the ids in it are

    def describe(self, limit: int = 600) -> str:
        url = self.url if len(self.url) <= limit else self.url[:limit] + f"... ({len(self.url)} characters in all)"
        lines = [f"{self.method} {url}", f"  caller: {self.caller}"]
        lines += [f"  ids: {n}" for n in self.notes]
        for name, value in self.headers:
            if name.lower() == b"authorization":
                continue
            lines.append(f"  {name.decode('latin-1')}: {_show(value, limit)}")
        if self.content is not None:
            lines.append(f"  body ({len(self.content)} bytes): {_show(self.content, limit)}")
        return "\n".join(lines)

    def size(self) -> int:
        return len(self.url) + len(self.content or b"") + sum(len(k) + len(v) for k, v in self.headers)


def _show(value: bytes, limit: int) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 40] + f"... ({len(value)} bytes in all)"


def encode_query(pairs: list[tuple[str, Any]]) -> str:
    parts = []
    for name, value in pairs:
        key = quote(_text(name), safe="", errors="surrogatepass")
        val = value.encoded if isinstance(value, RawQuery) else quote(_text(value), safe="", errors="surrogatepass")
        parts.append(f"{key}={val}")
    return "&".join(parts)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def header_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return _text(value).encode("utf-8", "surrogatepass")


def dump_json(body: Any) -> bytes:
    """JSON with ``Raw`` pieces put in verbatim; strings keep NUL and lone surrogates as \\u escapes."""
    raws: dict[str, str] = {}

    def placeholder(value: Any) -> Any:
        if isinstance(value, Raw):
            key = f"@@raw{len(raws)}@@"
            raws[key] = value.text
            return key
        raise TypeError(f"cannot encode {type(value).__name__}")

    text = json.dumps(body, ensure_ascii=True, allow_nan=True, default=placeholder)
    for key, raw in raws.items():
        text = text.replace(json.dumps(key), raw, 1)
    return text.encode()


# --- what a response must be ---------------------------------------------------------------------------------


def response_problem(status: int, content_type: str, content: bytes, *, json_success: bool = True) -> str | None:
    """Why this response breaks the API's contract, or None: never a 5xx, every error is JSON of the shape
    {"error": {"code": str, "message": str, "field": str | null, ...}}, and (``json_success``) so is a success."""
    if status >= 500:
        return f"status {status}"
    if status == 204 or (status < 400 and (not content or not json_success)):
        return None
    if content_type.split(";")[0].strip().lower() != "application/json":
        return f"status {status} with Content-Type {content_type!r}, not JSON"
    try:
        body = json.loads(content)
    except ValueError as exc:
        return f"status {status}: body is not JSON ({exc})"
    if status < 400:
        return None
    if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict):
        return f"status {status}: error body is not {{'error': {{...}}}}: {str(body)[:300]}"
    err = body["error"]
    if not isinstance(err.get("code"), str) or not err["code"]:
        return f"status {status}: error.code is not a non-empty string: {err.get('code')!r}"
    if not isinstance(err.get("message"), str) or not err["message"]:
        return f"status {status}: error.message is not a non-empty string: {err.get('message')!r}"
    if "field" not in err or not (err["field"] is None or isinstance(err["field"], str)):
        return f"status {status}: error.field is missing or not a string or null: {err.get('field', '<missing>')!r}"
    return None


def _validator(pointer: str) -> Any:
    """A JSON Schema validator for the schema at ``pointer`` in SPEC (its $refs resolved within SPEC)."""
    if pointer not in _VALIDATORS:
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        registry = Registry().with_resource("urn:engram-spec", Resource.from_contents(SPEC, DRAFT202012))
        _VALIDATORS[pointer] = Draft202012Validator({"$ref": f"urn:engram-spec#{pointer}"}, registry=registry)
    return _VALIDATORS[pointer]


_VALIDATORS: dict[str, Any] = {}


def conformance_problem(label: str, status: int, content_type: str, content: bytes) -> str | None:
    """Why this response is not what the OpenAPI document says the operation answers, or None: its status must
    be documented, and a JSON body must validate against the schema documented for that status."""
    method, path = label.split(" [", 1)[0].split(" ", 1)
    if method.lower() not in SPEC["paths"].get(path, {}):  # unrouted: an error in the documented shape, if JSON
        if "json" not in content_type or path in ("/openapi.json", "/docs"):
            return None
        errors = list(_validator("/components/schemas/Error").iter_errors(json.loads(content)))
        return (
            f"status {status}: the body does not match the Error schema: {errors[0].message[:300]}" if errors else None
        )
    responses = SPEC["paths"][path][method.lower()]["responses"]
    if str(status) not in responses:
        return f"status {status} is not documented for {label} (documented: {', '.join(sorted(responses))})"
    media = responses[str(status)].get("content", {}).get("application/json")
    if media is None or "schema" not in media or not content or "json" not in content_type:
        return None
    escaped = path.replace("~", "~0").replace("/", "~1")
    pointer = f"/paths/{escaped}/{method.lower()}/responses/{status}/content/application~1json/schema"
    errors = sorted(_validator(pointer).iter_errors(json.loads(content)), key=lambda e: list(e.absolute_path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(the body)"
        return f"status {status}: the body does not match the documented schema at {where}: {errors[0].message[:300]}"
    return None


# --- the server's side of a failure ---------------------------------------------------------------------------


class ServerErrors(logging.Handler):
    """Collects what the app logs at ERROR (the 500 handler logs the traceback) and exceptions that escape it."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.tracebacks: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + "".join(traceback.format_exception(*record.exc_info))
        self.tracebacks.append(text)

    def wrap(self, app: Callable[..., Any]) -> Callable[..., Any]:
        async def recorded(scope: Any, receive: Any, send: Any) -> None:
            try:
                await app(scope, receive, send)
            except Exception as exc:
                if not self.tracebacks:  # the 500 handler logs it; this one escaped without
                    self.tracebacks.append("escaped the app:\n" + "".join(traceback.format_exception(exc)))
                raise

        return recorded

    def take(self) -> str | None:
        out = "\n".join(self.tracebacks) or None
        self.tracebacks.clear()
        return out

    @classmethod
    @contextmanager
    def installed(cls) -> Iterator[ServerErrors]:
        """Listening on the root logger for as long as the context lasts."""
        handler = cls()
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            yield handler
        finally:
            root.removeHandler(handler)


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _ours(path: str) -> bool:
    return "site-packages" not in path and "/lib/python3" not in path


def signature(label: str, problem: str, tb: str | None) -> str:
    """One failure per distinct cause: the route, the exception and the deepest frame of the project's code."""
    if not tb:
        return f"{label}: {re.sub(r'[0-9a-f-]{36}', '<id>', problem)[:160]}"
    frames = [f for f in _FRAME.findall(tb) if _ours(f[0])]
    where = f"{frames[-1][0].split('/src/')[-1]}:{frames[-1][1]} in {frames[-1][2]}" if frames else "?"
    last = [line for line in tb.strip().splitlines() if line and not line.startswith(" ")]
    exc = last[-1].split(":")[0][:120] if last else "?"
    return f"{label}: {exc} at {where}"


@dataclass
class Failure:
    signature: str
    request: Request
    status: int | None
    response: str
    problem: str
    traceback: str | None
    count: int = 1


class Failures:
    """Distinct failures of a test, each with its smallest reproduction."""

    def __init__(self) -> None:
        self.found: dict[str, Failure] = {}

    def add(
        self, label: str, request: Request, status: int | None, response: str, problem: str, tb: str | None
    ) -> None:
        sig = signature(label, problem, tb)
        old = self.found.get(sig)
        if old is None or request.size() < old.request.size():
            self.found[sig] = Failure(sig, request, status, response[:800], problem, tb, (old.count + 1) if old else 1)
        else:
            old.count += 1

    def report(self) -> str:
        parts = [f"{len(self.found)} distinct failure(s):"]
        for n, f in enumerate(self.found.values(), 1):
            parts.append(
                f"\n[{n}] {f.signature}  ({f.count} request(s))\n  problem: {f.problem}\n"
                f"  smallest reproduction:\n    {f.request.describe().replace(chr(10), chr(10) + '    ')}\n"
                f"  response: {f.status} {f.response}\n"
                + (f"  server traceback (tail):\n{_tail(f.traceback)}" if f.traceback else "")
            )
        return "\n".join(parts)


def _tail(tb: str, lines: int = 40) -> str:
    """The traceback without the frames of libraries: the project's frames and the exception."""
    kept: list[str] = []
    skipping = False
    for line in tb.strip().splitlines():
        match = _FRAME.search(line)
        if match:
            skipping = not _ours(match.group(1))
        elif not line.startswith(" "):
            skipping = False
        if not skipping:
            kept.append(line)
    return "\n".join("      " + line for line in kept[-lines:])
