"""Property-based tests of the whole REST surface: every route of ``app.openapi()`` gets requests generated
from its schema (schemathesis, positive and negative) and overlaid with hostile values (see ``fuzz.py``), sent
by keys of every role against the real embedded PostgreSQL. Whatever comes in:

* no response is a 5xx;
* every error is JSON shaped ``{"error": {"code": str, "message": str, "field": str | null, ...}}``.

A failure lists each distinct cause once, with its smallest reproduction and the server's traceback.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi.responses import PlainTextResponse
from fastapi.routing import APIRoute
from schemathesis.core import NOT_SET

from engram import Engram
from engram.api import create_app
from engram.config import Settings
from engram.outbox.dispatcher import Dispatcher
from tests.api import fuzz
from tests.api.fuzz import OPERATIONS, Failures, Plan, Request, ServerErrors

ACME, GLOBEX = "acme", "globex"


@dataclass
class World:
    """The app over a fresh database, with keys of each role and memories, a receipt and keys to point at."""

    engram: Engram
    client: httpx.AsyncClient
    errors: ServerErrors
    keys: dict[str, str] = field(default_factory=dict)  # caller -> secret
    ids: dict[str, str] = field(default_factory=dict)  # fixed targets: shared, receipt, foreign, ...
    counter: itertools.count[int] = field(default_factory=itertools.count)

    async def setup(self) -> None:
        for caller, tenant, spec in [
            ("agent", ACME, {"role": "agent"}),
            ("reviewer", ACME, {"role": "reviewer"}),
            ("admin", ACME, {"role": "admin"}),
            ("bound", ACME, {"role": "agent", "user_id": "u1", "agent_id": "a1"}),
            ("foreign", GLOBEX, {"role": "admin"}),
        ]:
            made = await self.engram.create_key({**spec, "name": f"fuzz {caller}"}, tenant=tenant)
            self.keys[caller] = made.key
        shared = await self.engram.remember(
            "Customer prefers email over phone for the weekly report",
            tenant=ACME, user_id="u1", visibility="tenant", tags=["t", "shared"], metadata={"k": "v", "n": 1},
            fact_key="pref.contact",
        )  # fmt: skip
        self.ids["shared"] = str(shared.id)
        await self.engram.update(shared.id, {"importance": 0.9}, expected_revision=1, tenant=ACME)
        recall = await self.engram.recall("how does the customer want the report", tenant=ACME, user_id="u1")
        self.ids["receipt"] = str(recall.receipt_id)
        foreign = await self.engram.remember("A memory of another tenant", tenant=GLOBEX, user_id="u1")
        self.ids["foreign"] = str(foreign.id)
        foreign_recall = await self.engram.recall("another tenant", tenant=GLOBEX, user_id="u1")
        self.ids["foreign_receipt"] = str(foreign_recall.receipt_id)
        self.ids["foreign_key"] = str((await self.engram.create_key({"role": "agent"}, tenant=GLOBEX)).id)
        await self.engram.put_workflow_state("wf-fuzz", {"goal": "Ship the weekly report"}, tenant=ACME)
        self.ids["workflow"] = "wf-fuzz"
        await self.engram.put_procedure("fuzz-proc", {"steps": ["Check the invoice", "Reply"]}, tenant=ACME)
        self.ids["procedure"] = "fuzz-proc"
        for token, tenant in (("action", ACME), ("foreign_action", GLOBEX)):
            act = {"idempotency_key": f"fuzz-{token}", "url": "http://127.0.0.1:9/hook", "payload": {"a": 1}}
            self.ids[token] = str((await self.engram.act(act, tenant=tenant)).action.id)

    async def dead_action(self) -> str:
        """A new action, dead after its one attempt (nothing listens on the discard port)."""
        act = {"idempotency_key": f"fuzz-dead-{next(self.counter)}", "url": "http://127.0.0.1:9/", "max_attempts": 1}
        made = await self.engram.act(act, tenant=ACME)
        await Dispatcher(self.engram).run_once()
        return str(made.action.id)

    async def memory(self, token: str) -> str:
        """The id of a memory in the state the token names (a new one unless it is shared or foreign)."""
        if token in ("shared", "foreign"):
            return self.ids[token]
        n = next(self.counter)
        made = await self.engram.remember(
            f"Fresh memory number {n} about the deploy window", tenant=ACME, user_id="u1", tags=["t"],
            metadata={"n": n}, fact_key=f"fuzz.fact{n}", importance=0.95 if token == "held" else 0.5,
        )  # fmt: skip
        if token == "archived":
            await self.engram.archive(made.id, tenant=ACME)
        elif token == "deleted":
            await self.engram.delete(made.id, tenant=ACME)
        elif token == "superseded":
            await self.engram.remember(
                f"Fresh memory number {n}, corrected", tenant=ACME, user_id="u1", fact_key=f"fuzz.fact{n}"
            )
        return str(made.id)

    async def resolve(self, plan: Plan) -> Request:
        """The request a plan stands for, its ids and caller made real."""
        notes: list[str] = []
        path = plan.op.path
        caller_name = plan.caller
        caller_key = self.keys.get(plan.caller)
        for name in plan.op.path_params:
            token = plan.path_tokens.get(name, "generated")
            value = str(plan.path_params.get(name, ""))
            if token != "generated":
                if name == "memory_id":
                    value = await self.memory(token)
                elif token == "dead_action":
                    value = await self.dead_action()
                elif token in (
                    "receipt",
                    "foreign_receipt",
                    "foreign_key",
                    "workflow",
                    "action",
                    "foreign_action",
                    "procedure",
                ):
                    value = self.ids[token]
                elif token == "spare":
                    value = str((await self.engram.create_key({"role": "agent", "name": "spare"}, tenant=ACME)).id)
                elif token == "own":  # the caller revokes the key it is calling with
                    tenant = GLOBEX if plan.caller == "foreign" else ACME
                    role = plan.caller if plan.caller in ("agent", "reviewer", "admin") else "admin"
                    made = await self.engram.create_key({"role": role, "name": "own"}, tenant=tenant)
                    value, caller_key, caller_name = str(made.id), made.key, f"a new {role} key of {tenant}"
                notes.append(f"{name} = {token} ({value})")
            path = path.replace("{" + name + "}", value)
        body = plan.body
        if isinstance(body, dict):
            for name, token in plan.body_tokens.items():
                if token != "generated":
                    body[name] = await self.memory(token)
                    notes.append(f"body.{name} = {token} memory ({body[name]})")
        headers: list[tuple[bytes, bytes]] = []
        if plan.caller == "generated":
            caller_name = f"schemathesis' Authorization {plan.generated_auth!r}"
            if plan.generated_auth is not None:
                headers.append((b"Authorization", fuzz.header_bytes(plan.generated_auth)))
        elif plan.auth is not None:
            auth = plan.auth
            if isinstance(auth, str):
                auth = auth.replace("{key}", caller_key or "")
            headers.append((b"Authorization", fuzz.header_bytes(auth)))
            caller_name = f"{caller_name} key, sent as {plan.auth!r}"
        else:
            headers.append((b"Authorization", f"Bearer {caller_key}".encode()))
            caller_name = f"{caller_name} key"
        content: bytes | None = None
        if body is not NOT_SET:
            content = body if isinstance(body, bytes) else fuzz.dump_json(body)
        has_type = any(k.lower() == "content-type" for k in plan.headers)
        for name, value in plan.headers.items():
            headers.append((fuzz.header_bytes(name), fuzz.header_bytes(value)))
        if content is not None and not has_type:
            headers.append((b"Content-Type", (plan.media_type or "application/json").encode()))
        query = fuzz.encode_query(plan.query)
        url = path + ("?" + query if query else "")
        return Request(plan.op.method, url, headers, content, caller_name, notes)

    async def send(self, request: Request) -> tuple[int | None, str, bytes, str | None]:
        """Status, content type, body and the server's traceback (if it logged one)."""
        self.errors.take()
        try:
            built = self.client.build_request(
                request.method, request.url, headers=request.headers, content=request.content
            )
        except Exception as exc:  # not the app's fault: the harness made a request httpx cannot send
            raise AssertionError(f"the test built a request httpx cannot send:\n{request.describe()}") from exc
        try:
            resp = await self.client.send(built)
        except Exception as exc:  # the app must answer; an exception out of it is a failure too
            return None, "", repr(exc).encode(), self.errors.take() or repr(exc)
        return resp.status_code, resp.headers.get("content-type", ""), resp.content, self.errors.take()

    async def check(
        self, label: str, request: Request, failures: Failures, statuses: Counter[int | None], *, api: bool = True
    ) -> int | None:
        """Send the request; record a failure if the response breaks the contract. Returns the status."""
        status, content_type, content, tb = await self.send(request)
        statuses[status] += 1
        problem = (
            "no response: an exception escaped the app"
            if status is None
            else fuzz.response_problem(status, content_type, content, json_success=api)
            or fuzz.conformance_problem(label, status, content_type, content)
        )
        if problem is not None:
            failures.add(label, request, status, content.decode("utf-8", "replace"), problem, tb)
        return status


@pytest.fixture
async def world(engram: Engram) -> AsyncIterator[World]:
    app = create_app(engram, run_worker=False)
    with ServerErrors.installed() as errors:
        transport = httpx.ASGITransport(app=errors.wrap(app), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://engram.test") as client:
            w = World(engram=engram, client=client, errors=errors)
            await w.setup()
            yield w


def _api_routes(routes: list[Any]) -> list[APIRoute]:
    out: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            out.append(route)
        elif hasattr(route, "original_router"):  # FastAPI includes routers lazily
            out += _api_routes(route.original_router.routes)
    return out


TEXT_PAGES = {"GET /metrics"}  # Prometheus's text format


def test_every_route_of_the_app_is_fuzzed() -> None:
    """The generated tests cover every route the app serves, so a new route cannot be left out."""
    app = create_app(None, run_worker=False)
    served = {
        f"{method} {route.path}"
        for route in _api_routes(app.routes)
        if route.include_in_schema  # /docs and /redoc are pages (tests/api/test_api_docs.py), not the API
        for method in route.methods
        if method != "HEAD"
    }
    assert served == set(OPERATIONS), served ^ set(OPERATIONS)
    assert len(OPERATIONS) >= 19


@pytest.mark.parametrize("label", list(OPERATIONS))
async def test_generated_requests_get_no_5xx_and_json_errors(world: World, label: str) -> None:
    plans = fuzz.collect_plans(label)
    assert len(plans) == fuzz.EXAMPLES
    failures = Failures()
    statuses: Counter[int | None] = Counter()
    text_page = label in TEXT_PAGES  # a success in another format; its errors are still JSON
    for plan in plans:
        request = await world.resolve(plan)
        await world.check(label, request, failures, statuses, api=not text_page)
    assert sum(statuses.values()) == len(plans)
    assert not failures.found, f"{label} (statuses seen: {dict(statuses)})\n{failures.report()}"
    # The generated requests reach the route's own logic, not only the validation in front of it.
    assert any(s is not None and s < 400 for s in statuses), f"{label}: no request succeeded: {dict(statuses)}"
    if label not in ("GET /healthz", "GET /metrics"):  # they take no input to refuse
        assert any(s is not None and 400 <= s < 500 for s in statuses), f"{label}: no request refused: {statuses}"


# --- raw bodies: what no JSON encoder would produce -------------------------------------------------------

_DEEP = 900
_MAX_BODY = Settings().max_body_bytes  # what create_app() uses


def _valid_body(label: str, ids: dict[str, str]) -> dict[str, Any]:
    return {
        "POST /v1/memories": {"content": "Raw body note", "user_id": "u1", "metadata": {"a": "b"}},
        "POST /v1/memories:batch": {"items": [{"content": "Raw body note", "user_id": "u1", "metadata": {"a": "b"}}]},
        "POST /v1/memories:extract": {"text": "User: I live in Porto. The raw body deploy failed.", "user_id": "u1"},
        "PATCH /v1/memories/{memory_id}": {"content": "Raw body patch", "metadata": {"a": "b"}},
        "POST /v1/memories/{memory_id}/archive": {"reason": "done"},
        "POST /v1/memories/{memory_id}/unarchive": {"reason": "back"},
        "POST /v1/recall": {"query": "raw body recall", "user_id": "u1", "metadata": {"a": "b"}},
        "POST /v1/relations": {"src_id": ids["shared"], "dst_id": ids["other"], "type": "related", "metadata": {}},
        "POST /v1/keys": {"role": "agent", "name": "raw body key"},
        "PATCH /v1/tenant": {"fts_config": "simple"},
        "PATCH /v1/policy": {"filler": "reject", "min_semantic_confidence": 0.75},
        "POST /v1/policy:rescan": {"batch": 5},
        "POST /v1/vault:rotate": {},
        "POST /v1/approvals/{memory_id}:approve": {"note": "checked"},
        "POST /v1/approvals/{memory_id}:reject": {"note": "wrong"},
        "POST /v1/actions": {"idempotency_key": "raw-body", "url": "http://127.0.0.1:9/", "payload": {"a": "b"}},
        "POST /v1/actions/{action_id}/retry": {},
        "PUT /v1/workflows/{workflow_id}/state": {"goal": "Raw body goal", "notes": {"a": "b"}},
        "POST /v1/subjects/{user_id}:forget": {},
        "POST /v1/sessions/{session_id}/turns": {"speaker": "user", "content": "Raw body turn about invoices"},
        "PUT /v1/procedures/{name}": {"description": "raw body", "steps": ["Check the invoice", "Reply"]},
        "POST /v1/admin/consolidate": {"agent_id": "raw-body-agent", "min_episodes": 3, "dry_run": True},
        "PUT /v1/admin/lifecycle": {"archive_below": 0.2, "preference_unused_days": None},
        "POST /v1/admin/decay": {"dry_run": True},
        "POST /v1/receipts:prune": {"dry_run": True},
    }[label]


def _with_each_string(body: Any, text: str) -> list[tuple[str, Any]]:
    """Copies of ``body`` with one string (or object key) at a time replaced by one holding ``text``."""
    out: list[tuple[str, Any]] = []

    def walk(node: Any, path: str, replace: Any) -> None:
        if isinstance(node, str):
            out.append((path, replace(f"a{text}b")))
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}.{k}", lambda new, k=k, n=node, r=replace: r({**n, k: new}))
            if node:
                first = next(iter(node))
                renamed = {(f"{first}{text}" if k == first else k): v for k, v in node.items()}
                out.append((f"{path} (key {first!r})", replace(renamed)))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]", lambda new, i=i, n=node, r=replace: r([*n[:i], new, *n[i + 1 :]]))

    walk(body, "body", lambda new: new)
    return out


_NUMBERS = {
    "POST /v1/memories": ("confidence", "importance"),
    "POST /v1/memories:batch": ("confidence",),
    "PATCH /v1/memories/{memory_id}": ("confidence", "importance"),
    "POST /v1/recall": ("max_items", "max_tokens"),
    "POST /v1/relations": ("weight",),
    "POST /v1/actions": ("max_attempts",),
}


def raw_bodies(label: str, ids: dict[str, str]) -> list[tuple[str, bytes, str | None]]:
    valid = _valid_body(label, ids)
    text = fuzz.dump_json(valid)
    cases: list[tuple[str, bytes, str | None]] = [
        ("valid", text, "application/json"),
        ("invalid JSON", b'{"content": "unterminated', "application/json"),
        ("trailing garbage", text + b"}", "application/json"),
        ("raw NUL byte in a string", text.replace(b'"a', b'"\x00a', 1), "application/json"),
        ("text/plain", text, "text/plain"),
        ("no Content-Type", text, None),
        ("form", b"content=x&query=y", "application/x-www-form-urlencoded"),
        ("JSON with charset", text, "application/json; charset=utf-8"),
        ("+json media type", text, "application/merge-patch+json"),
        ("empty", b"", "application/json"),
        ("null", b"null", "application/json"),
        ("array", b"[]", "application/json"),
        ("string", b'"x"', "application/json"),
        ("number", b"1e999", "application/json"),
        ("NaN", b"NaN", "application/json"),
        ("invalid UTF-8", b'{"content": "\xff\xfe", "query": "\xc3\x28"}', "application/json"),
        ("UTF-8 BOM", b"\xef\xbb\xbf" + text, "application/json"),
        ("UTF-16", text.decode().encode("utf-16"), "application/json"),
        ("duplicate keys", text[:-1] + b"," + text[1:], "application/json"),
        ("array nested 100000 deep", b"[" * 100_000 + b"]" * 100_000, "application/json"),
        ("oversized (whitespace)", b" " * (_MAX_BODY + 1), "application/json"),
    ]
    for where, body in _with_each_string(valid, "\x00"):
        cases.append((f"\\u0000 in {where}", fuzz.dump_json(body), "application/json"))
    for where, body in _with_each_string(valid, "\ud800"):
        cases.append((f"lone surrogate in {where}", fuzz.dump_json(body), "application/json"))
    for name, raw in [
        (f"metadata nested {_DEEP} deep", fuzz.deep_object_text(_DEEP)),
        ("metadata nested 8 deep", fuzz.deep_object_text(8)),
        ("metadata nested 9 deep", fuzz.deep_object_text(9)),
        ("metadata with a 5000-digit number", '{"n": 1' + "0" * 5000 + "}"),
        ("metadata with 2**64", '{"n": 18446744073709551616}'),
        ("metadata with NaN", '{"n": NaN}'),
        ("metadata with 1e999", '{"n": 1e999}'),
        ("metadata with -0.0 and 5e-324", '{"n": -0.0, "m": 5e-324}'),
    ]:
        target = valid["items"][0] if "items" in valid else valid
        if "metadata" in target:
            doc = fuzz.dump_json({**valid, "items": [{**target, "metadata": fuzz.Raw(raw, name)}]} if "items" in valid
                                 else {**valid, "metadata": fuzz.Raw(raw, name)})  # fmt: skip
            cases.append((name, doc, "application/json"))
    for key in _NUMBERS.get(label, ()):
        for number in ("NaN", "1e999", "-1e999", "1" + "0" * 5000, "18446744073709551616", "-0.0"):
            raw = fuzz.Raw(number, number[:20])
            doc = {"items": [{**valid["items"][0], key: raw}]} if "items" in valid else {**valid, key: raw}
            cases.append((f"{key} = {number[:20]}", fuzz.dump_json(doc), "application/json"))
    return cases


# What the request guard promises (src/engram/api/guard.py), and bodies that are plainly fine.
_EXPECTED = {"text/plain": 415, "no Content-Type": 415, "form": 415, "oversized (whitespace)": 413}
_ACCEPTED = ("valid", "JSON with charset", "+json media type")


@pytest.mark.parametrize("label", fuzz.BODY_OPERATIONS)
async def test_raw_bodies_get_no_5xx_and_json_errors(world: World, label: str) -> None:
    op = OPERATIONS[label]
    world.ids["other"] = await world.memory("fresh")
    failures = Failures()
    statuses: Counter[int | None] = Counter()
    wrong: list[str] = []
    cases = raw_bodies(label, world.ids)
    for name, content, content_type in cases:
        state = "archived" if label.endswith("/unarchive") else "held" if "/v1/approvals/" in label else "fresh"
        target = await world.memory(state)
        path = op.path.replace("{memory_id}", target).replace("{action_id}", await world.dead_action())
        path = path.replace("{workflow_id}", f"wf-raw-{next(world.counter)}")  # a new workflow: no If-Match
        path = path.replace("{user_id}", f"raw-user-{next(world.counter)}").replace("{session_id}", "raw-session")
        path = path.replace("{name}", "raw-procedure")
        headers = [(b"Authorization", f"Bearer {world.keys['admin']}".encode())]
        if op.method == "PATCH" and "{memory_id}" in op.path:
            headers.append((b"If-Match", b"1"))
        if content_type is not None:
            headers.append((b"Content-Type", content_type.encode()))
        request = Request(op.method, path, headers, content, "admin key", [f"raw body: {name}"])
        status = await world.check(f"{label} [{name}]", request, failures, statuses)
        if name in _EXPECTED and status != _EXPECTED[name]:
            wrong.append(f"{name}: expected {_EXPECTED[name]}, got {status}")
        if name in _ACCEPTED and not (status and status < 300):
            wrong.append(f"{name}: expected a success, got {status}")
    assert sum(statuses.values()) == len(cases) >= 20
    assert not failures.found, f"{label} (statuses seen: {dict(statuses)})\n{failures.report()}"
    assert not wrong, wrong


# --- requests no route takes ---------------------------------------------------------------------------------


async def test_unrouted_methods_and_paths_get_json_errors(world: World) -> None:
    failures = Failures()
    statuses: Counter[int | None] = Counter()
    auth = (b"Authorization", f"Bearer {world.keys['admin']}".encode())
    mid = world.ids["shared"]
    for path in fuzz.SPEC["paths"]:
        concrete = path.replace("{memory_id}", mid).replace("{receipt_id}", mid).replace("{key_id}", mid)
        concrete = concrete.replace("{action_id}", mid).replace("{workflow_id}", "wf-fuzz")
        concrete = concrete.replace("{user_id}", "u9").replace("{session_id}", "s9").replace("{name}", "p9")
        served = {m.upper() for m in fuzz.SPEC["paths"][path]}
        for method in set(fuzz.METHODS) - served:
            request = Request(method, concrete, [auth], None, "admin key")
            status = await world.check(f"{method} {path}", request, failures, statuses)
            assert status == 405, f"{method} {path}: {status}"
    for url in ["/", "/v1", "/v1/", "/v1/memories/", "/v1/nothing", "/v1/memories/%00", "/v1/memories:unknown",
                "/v1/memories/" + "x" * 5000, "/%ED%A0%80", "/v1/memories/" + mid + "/nothing", "/openapi.json",
                "/docs", "/v1/keys/" + mid + "/x"]:  # fmt: skip
        request = Request("GET", url, [auth], None, "admin key")
        await world.check(f"GET {url[:60]}", request, failures, statuses, api=url != "/docs")
    assert statuses[405] > 10 and statuses[404] > 5
    assert not failures.found, failures.report()


async def test_the_checks_catch_a_5xx_and_a_non_json_error(engram: Engram) -> None:
    """The harness itself: a route that raises is reported with its traceback, a text error as not JSON."""
    app = create_app(engram, run_worker=False)

    async def broken() -> None:
        raise KeyError("planted")

    async def text() -> PlainTextResponse:
        return PlainTextResponse("no", status_code=400)

    app.add_api_route("/v1/broken", broken)
    app.add_api_route("/v1/text", text)
    with ServerErrors.installed() as errors:
        transport = httpx.ASGITransport(app=errors.wrap(app), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://engram.test") as client:
            w = World(engram=engram, client=client, errors=errors)
            failures, statuses = Failures(), Counter[int | None]()
            for path in ("/v1/broken", "/v1/text"):
                await w.check(f"GET {path}", Request("GET", path, [], None, "nobody"), failures, statuses)
    assert statuses == {500: 1, 400: 1}
    broken_failure, text_failure = failures.found.values()
    assert broken_failure.signature.startswith("GET /v1/broken: KeyError at ")
    assert broken_failure.traceback and "planted" in broken_failure.traceback
    assert "not JSON" in text_failure.problem
    assert "GET /v1/broken" in failures.report()
