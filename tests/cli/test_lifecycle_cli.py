"""The lifecycle commands as real processes on the embedded PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import run_cli


def test_consolidate_turns_repeats_into_a_fact_once(data_dir: Path, workdir: Path) -> None:
    for text in ("Prefers invoices in EUR.", "prefers invoices in EUR!", "user: Prefers invoices in EUR"):
        args = ("remember", text, "--kind", "episodic", "--user-id", "u1", "--tenant", "acme")
        r = run_cli(*args, "--data-dir", data_dir, cwd=workdir)
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


def test_decay_reports_and_dry_runs(data_dir: Path, workdir: Path) -> None:
    r = run_cli("remember", "Maybe the customer likes blue.", "--kind", "episodic", "--importance", "0.1",
                "--tenant", "acme", "--data-dir", data_dir, cwd=workdir)  # fmt: skip
    assert r.returncode == 0, r.stderr
    dry = run_cli("decay", "--tenant", "acme", "--dry-run", "--json", "--data-dir", data_dir, cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["dry_run"] is True and report["scanned"] == 1 and report["archived"] == 0  # too young yet
    text = run_cli("decay", "--tenant", "acme", "--data-dir", data_dir, cwd=workdir)
    assert text.returncode == 0 and "1 memories looked at, archived 0, expired 0" in text.stdout, text.stdout


def test_prune_receipts_keeps_the_recent_ones(data_dir: Path, workdir: Path) -> None:
    assert run_cli("remember", "The warehouse ships on Mondays.", "--tenant", "acme", "--data-dir", data_dir,
                   cwd=workdir).returncode == 0  # fmt: skip
    assert run_cli("recall", "when does the warehouse ship", "--tenant", "acme", "--data-dir", data_dir,
                   cwd=workdir).returncode == 0  # fmt: skip
    args = ("prune-receipts", "--tenant", "acme", "--data-dir", data_dir)
    dry = run_cli(*args, "--dry-run", "--json", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["dry_run"] is True and report["deleted"] == 0 and report["receipt_days"] == 90
    done = run_cli(*args, cwd=workdir)
    assert done.returncode == 0 and "deleted 0 receipts created before" in done.stdout, done.stdout
