"""Browser tests: Debian's Chromium (/usr/bin/chromium; `.ci/run` installs it), driven by Playwright, against a
real `engram serve` (tests/cli/conftest.py's ``serve`` on a fresh data directory). A failing test leaves a
screenshot of the page it was on in its tmp_path (failure.png)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.cli.conftest import data_dir, initialised_template, serve, workdir  # noqa: F401 - fixtures

CHROMIUM = "/usr/bin/chromium"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed  # type: ignore[attr-defined]
    return report


FAILED = pytest.StashKey[bool]()


# Module scope, not session: while Playwright's sync API runs, its event loop counts as running on the main
# thread, and every later async test would fail with "Runner.run() cannot be called from a running event loop".
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: `apt-get install chromium` (.ci/run does)"
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()
    assert asyncio._get_running_loop() is None, "Playwright left its event loop running"


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    yield opened
    if request.node.stash.get(FAILED, False):
        opened.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
        print(f"screenshot of the failing page: {tmp_path / 'failure.png'}")
    context.close()


@pytest.fixture
def ui(data_dir: Path, workdir: Path, serve: Any) -> Any:  # noqa: F811 - the imported fixtures
    return serve(data_dir)
