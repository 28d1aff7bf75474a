"""The review UI in a real browser, as a reviewer uses it: sign in, find a memory, correct it, approve a held
one, open the receipt of a recall that used it; and the same sign-in with the keyboard alone.

With ENGRAM_UPDATE_SCREENSHOTS=1 the memory and receipt pages are saved to docs/img/ (docs/ui.md shows them)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from engram.client import Client
from tests.cli.conftest import create_key

pytestmark = pytest.mark.browser
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def seed(ui: Any, data_dir: Path, workdir: Path) -> dict[str, Any]:
    agent = Client(ui.url, create_key(data_dir, workdir, "acme", role="agent"))
    with agent:
        usd = agent.remember("Invoices for Acme go out in USD", kind="semantic", fact_key="invoice.currency",
                             confidence=0.9, tags=["billing"])  # fmt: skip
        agent.remember("The deploy window is Tuesday 14:00 UTC", tags=["ops"])
        held = agent.remember("Refunds above 500 EUR need the finance lead's approval", importance=0.95)
        recalled = agent.recall("which currency do invoices for Acme use?")
    assert held.status == "pending_approval"
    return {"usd": str(usd.id), "held": str(held.id), "receipt": str(recalled.receipt_id),
            "reviewer": create_key(data_dir, workdir, "acme", role="reviewer")}  # fmt: skip


def sign_in(page: Page, url: str, key: str) -> None:
    page.goto(f"{url}/ui/login")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Memories")).to_be_visible()


def test_a_reviewer_finds_corrects_approves_and_reads_a_receipt(page: Page, ui: Any, data_dir: Path,
                                                                  workdir: Path) -> None:  # fmt: skip
    world = seed(ui, data_dir, workdir)
    page.goto(f"{ui.url}/ui/")
    expect(page).to_have_url(re.compile(r"/ui/login$"))  # not signed in yet

    sign_in(page, ui.url, world["reviewer"])
    page.get_by_label("Text").fill("invoices")
    page.get_by_role("button", name="Search").click()
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(1)
    rows.get_by_role("link").click()
    expect(page.locator("blockquote.content")).to_have_text("Invoices for Acme go out in USD")
    expect(page.get_by_text("revision 1", exact=True)).to_be_visible()

    page.get_by_label(re.compile("Corrected content")).fill("Invoices for Acme go out in EUR")
    page.get_by_role("button", name="Save correction").click()
    expect(page.locator("blockquote.content")).to_have_text("Invoices for Acme go out in EUR")
    expect(page.get_by_text("revision 2", exact=True)).to_be_visible()
    expect(page.locator(".diff del").first).to_have_text("USD")
    expect(page.locator(".diff ins").first).to_have_text("EUR")

    receipt_link = page.locator("a[href^='/ui/receipts/']").first
    expect(receipt_link).to_have_text("which currency do invoices for Acme use?")
    if os.environ.get("ENGRAM_UPDATE_SCREENSHOTS") == "1":
        page.screenshot(path=str(DOCS_IMG / "memory.png"), full_page=True)
    receipt_link.click()
    expect(page.get_by_role("heading", name=re.compile("^Receipt"))).to_be_visible()
    expect(page.get_by_role("heading", name="Each retriever's candidates")).to_be_visible()
    expect(page.locator("tr.chosen").first).to_be_visible()
    if os.environ.get("ENGRAM_UPDATE_SCREENSHOTS") == "1":
        page.screenshot(path=str(DOCS_IMG / "receipt.png"), full_page=True)

    page.get_by_role("link", name="Approvals").click()
    expect(page.locator("tbody tr")).to_have_count(1)
    page.get_by_role("button", name=re.compile("^Approve: Refunds above 500 EUR")).click()
    expect(page.get_by_text("Nothing is waiting.")).to_be_visible()
    with Client(ui.url, world["reviewer"]) as reviewer:
        assert reviewer.get(world["held"]).status == "active"
        current = reviewer.get(world["usd"])
        assert current.content == "Invoices for Acme go out in EUR" and current.revision == 2

    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name="Memories: 3")).to_be_visible()


def test_a_stale_correction_is_shown_not_lost(page: Page, ui: Any, data_dir: Path, workdir: Path) -> None:
    world = seed(ui, data_dir, workdir)
    sign_in(page, ui.url, world["reviewer"])
    page.goto(f"{ui.url}/ui/memories/{world['usd']}")
    with Client(ui.url, world["reviewer"]) as other:  # someone else corrects it first
        other.update(world["usd"], {"importance": 0.7}, revision=1)
    page.get_by_label(re.compile("Corrected content")).fill("Invoices for Acme go out in GBP")
    page.get_by_role("button", name="Save correction").click()
    expect(page.get_by_role("alert")).to_contain_text("it is at revision 2 now, yours was 1")
    expect(page.get_by_label(re.compile("Corrected content"))).to_have_value("Invoices for Acme go out in GBP")


def test_agents_cannot_sign_in_and_the_keyboard_alone_suffices(page: Page, ui: Any, data_dir: Path,
                                                                 workdir: Path) -> None:  # fmt: skip
    world = seed(ui, data_dir, workdir)
    page.goto(f"{ui.url}/ui/login")
    page.get_by_label("API key").fill(create_key(data_dir, workdir, "acme", role="agent"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("An agent key cannot review")

    page.goto(f"{ui.url}/ui/login")
    expect(page.get_by_label("API key")).to_be_focused()  # autofocus: the key can be typed straight away
    page.keyboard.type(world["reviewer"])
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Memories")).to_be_visible()
    page.keyboard.press("Tab")  # the skip link comes first, and leads past the navigation
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    page.get_by_label("Text").focus()
    page.keyboard.type("deploy")
    page.keyboard.press("Enter")
    # Wait for the filtered list: the unfiltered one is still on screen until the search's page arrives.
    expect(page).to_have_url(re.compile(r"[?&]q=deploy"))
    expect(page.locator("tbody tr")).to_have_count(1)
    link = page.locator("tbody tr a").first
    link.focus()
    page.keyboard.press("Enter")
    expect(page.locator("blockquote.content")).to_have_text("The deploy window is Tuesday 14:00 UTC")


def test_docs_screenshots_exist() -> None:
    for name in ("memory.png", "receipt.png"):
        assert (DOCS_IMG / name).stat().st_size > 10_000, f"docs/img/{name}: run with ENGRAM_UPDATE_SCREENSHOTS=1"
    assert shutil.which("chromium") or Path("/usr/bin/chromium").exists()
