"""The lifecycle commands as real processes on the embedded PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import run_cli


def test_consolidate_turns_repeats_into_a_fact_once(data_dir: Path, workdir: Path) -> None:
    for text in ("Prefers invoices in EUR.", "prefers invoices in EUR!", "user: Prefers invoices in EUR"):
        r = run_cli("remember", text, "--kind", "episodic", "--user-id", "u1", "--tenant", "acme", "--data-dir", data_dir,
                    cwd=workdir)  # fmt: skip
        assert r.returncode == 0, r.stderr
    args = ("consolidate", "--tenant", "acme", "--data-dir", data_dir)
    dry = run_cli(*args, "--dry-run", "--json", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["groups"] == 1 and json.loads(dry.stdout)["created"] == 0
    done = run_cli(*args, cwd=workdir)
    assert done.returncode == 0 and "1 facts written" in done.stdout and "[created]" in done.stdout, done.stdout
    again = json.loads(run_cli(*args, "--json", cwd=workdir).stdout)
    assert again["created"] == 0 and again["facts"][0]["outcome"] == "unchanged"
    bad = run_cli(*args, "--min-episodes", "1", cwd=workdir)
    assert bad.returncode == 2 and "min_episodes" in bad.stderr
