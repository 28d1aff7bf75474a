"""`engram demo` against a real `engram serve`, as a new user runs it after `make run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import flat, run_cli


def test_the_demo_runs_green_against_the_running_server(data_dir: Path, workdir: Path, serve: Any) -> None:
    server = serve(data_dir)
    r = run_cli("demo", "--data-dir", data_dir, cwd=workdir)
    assert r.returncode == 0, r.stdout + r.stderr
    text = flat(r.stdout)
    for claim in ("supersedes the USD one", "replayed=True", "JPY never reaches", "quarantined", "recalls \"Invoices",
                  "The packet the agent puts in its prompt", f"{server.url}/ui/receipts/"):  # fmt: skip
        assert claim in text, claim
    again = run_cli("demo", "--json", "--data-dir", data_dir, cwd=workdir)  # fresh tenants: it runs again
    steps = json.loads(again.stdout)
    assert again.returncode == 0 and len(steps) == 6 and steps[-1]["receipt"]


def test_the_demo_says_what_to_do_without_a_server(tmp_path: Path, workdir: Path) -> None:
    r = run_cli("demo", "--data-dir", tmp_path / "none", cwd=workdir)
    assert r.returncode == 7 and "no `engram serve` is running" in flat(r.stderr)
