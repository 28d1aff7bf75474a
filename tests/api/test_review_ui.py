"""The review UI's rules without a browser (tests/browser drives it in Chromium): who may sign in, CSRF, the
security headers, masking by role, and each action's effect."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from engram import Engram
from engram.api import create_app

BASE = "http://engram.test"


@pytest.fixture
async def app(engram: Engram) -> Any:
    return create_app(engram, run_worker=False)


async def signed_in(app: Any, engram: Engram, role: str = "reviewer", **spec: Any) -> httpx.AsyncClient:
    key = (await engram.create_key({"role": role, "name": "ui", **spec}, tenant="acme")).key
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
    r = await client.post("/ui/login", data={"key": key})
    assert r.status_code == 303 and r.headers["location"] == "/ui/", r.text
    return client


def csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)


@pytest.fixture
async def reviewer(app: Any, engram: Engram) -> AsyncIterator[httpx.AsyncClient]:
    client = await signed_in(app, engram)
    yield client
    await client.aclose()


async def test_sign_in_needs_a_reviewer_or_admin_key(app: Any, engram: Engram) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as anon:
        r = await anon.get("/ui/")
        assert r.status_code == 303 and r.headers["location"] == "/ui/login"
        agent_key = (await engram.create_key({"role": "agent"}, tenant="acme")).key
        refused = await anon.post("/ui/login", data={"key": agent_key})
        assert refused.status_code == 403 and "cannot review" in refused.text
        wrong = await anon.post("/ui/login", data={"key": "egm_" + "x" * 43})
        assert wrong.status_code == 401 and "not valid" in wrong.text
        assert "Set-Cookie" not in refused.headers and "Set-Cookie" not in wrong.headers
    client = await signed_in(app, engram, role="admin")
    cookie = client.cookies.jar
    assert any(c.name == "engram_ui" and c.has_nonstandard_attr("HttpOnly") for c in cookie)
    page = await client.get("/ui/")
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert not re.search(r"<script|https?://(?!engram\.test)", page.text), "no script, nothing from elsewhere"
    await client.aclose()


async def test_forms_need_the_sessions_csrf_token(reviewer: httpx.AsyncClient, engram: Engram) -> None:
    mem = await engram.remember("The deploy window is Tuesday 14:00 UTC", tenant="acme")
    forged = await reviewer.post(f"/ui/memories/{mem.id}/archive", data={"csrf": "guess"})
    assert forged.status_code == 403 and "out of date" in forged.text
    missing = await reviewer.post(f"/ui/memories/{mem.id}/archive")
    assert missing.status_code == 403
    assert (await engram.get(mem.id, tenant="acme")).status == "active"
    token = csrf((await reviewer.get(f"/ui/memories/{mem.id}")).text)
    done = await reviewer.post(f"/ui/memories/{mem.id}/archive", data={"csrf": token})
    assert done.status_code == 303 and (await engram.get(mem.id, tenant="acme")).status == "archived"
    back = await reviewer.post(
        f"/ui/memories/{mem.id}/unarchive", data={"csrf": token, "next": "https://evil.example/"}
    )
    assert back.status_code == 303 and back.headers["location"] == f"/ui/memories/{mem.id}"


async def test_personal_data_is_masked_for_reviewers(app: Any, reviewer: httpx.AsyncClient, engram: Engram) -> None:
    mem = await engram.remember("Send the invoices to ap@example.org every Monday", tenant="acme")
    page = (await reviewer.get(f"/ui/memories/{mem.id}")).text
    assert "ap@example.org" not in page and "EMAIL_" in page and "Reveal personal data" not in page
    assert "ap@example.org" not in (await reviewer.get(f"/ui/memories/{mem.id}?reveal=1")).text
    admin = await signed_in(app, engram, role="admin")
    shown = (await admin.get(f"/ui/memories/{mem.id}?reveal=1")).text
    assert "ap@example.org" in shown and "audited" in shown
    await admin.aclose()


async def test_delete_correct_and_the_pages(reviewer: httpx.AsyncClient, engram: Engram) -> None:
    mem = await engram.remember("Invoices go out in USD", kind="semantic", fact_key="cur", confidence=0.9,
                                tenant="acme")  # fmt: skip
    other = await engram.remember("Invoices are sent by the billing team", tenant="acme")
    await engram.relate({"src_id": str(mem.id), "dst_id": str(other.id), "type": "related_to"}, tenant="acme")
    recalled = await engram.recall("which currency for invoices", tenant="acme")
    page = await reviewer.get(f"/ui/memories/{mem.id}")
    assert str(other.id) in page.text and f"/ui/receipts/{recalled.receipt_id}" in page.text
    token = csrf(page.text)
    ok = await reviewer.post(f"/ui/memories/{mem.id}/correct", data={"csrf": token, "revision": 1,
                                                                   "content": "Invoices go out in EUR"})  # fmt: skip
    assert ok.status_code == 303 and (await engram.get(mem.id, tenant="acme")).content == "Invoices go out in EUR"
    stale = await reviewer.post(f"/ui/memories/{mem.id}/correct", data={"csrf": token, "revision": 1,
                                                                      "content": "Invoices go out in GBP"})  # fmt: skip
    assert stale.status_code == 409 and "revision 2 now" in stale.text and "GBP" in stale.text
    receipt = await reviewer.get(f"/ui/receipts/{recalled.receipt_id}")
    assert receipt.status_code == 200 and "which currency for invoices" in receipt.text
    board = await reviewer.get("/ui/dashboard")
    assert board.status_code == 200 and "Memories: 2" in board.text and "<dt>Recalls</dt><dd>1</dd>" in board.text
    found = await reviewer.get("/ui/", params={"q": "BILLING team"})
    assert str(other.id) in found.text and str(mem.id) not in found.text
    gone = await reviewer.post(f"/ui/memories/{other.id}/delete", data={"csrf": token})
    assert gone.status_code == 200 and "deletion certificate" in gone.text
    missing = await reviewer.get(f"/ui/memories/{other.id}")
    assert missing.status_code == 404 and "does not exist" in missing.text
