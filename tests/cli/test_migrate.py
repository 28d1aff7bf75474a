"""`engram migrate` against an external database (DATABASE_URL) and the embedded one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import cli_env, flat, postmaster_pid, run_cli
from tests.conftest import service_url


def test_migrate_an_empty_external_database(empty_database_url: str, template_db: str, workdir: Path) -> None:
    owner_only = cli_env(DATABASE_URL=empty_database_url)

    # Before migrating, commands on the external database refuse to run and say what to do.
    before = run_cli("remember", "too early", "--tenant", "acme", cwd=workdir, env=owner_only)
    assert before.returncode == 7, (before.stdout, before.stderr)
    assert "engram migrate" in flat(before.stderr)

    first = run_cli("migrate", cwd=workdir, env=owner_only)
    assert first.returncode == 0, first.stderr
    assert "applied 0001_foundation" in first.stdout.splitlines()

    second = run_cli("migrate", cwd=workdir, env=owner_only)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "schema is up to date"

    # The owner may migrate but not serve: row-level security would not hold it (docs/security.md).
    refused = run_cli("remember", "as the owner", "--tenant", "acme", cwd=workdir, env=owner_only)
    assert refused.returncode == 7, (refused.stdout, refused.stderr)
    assert "ENGRAM_OWNER_DATABASE_URL" in flat(refused.stderr) and "Traceback" not in refused.stderr

    # The service's own login (granted engram_app), with the owner's URL beside it for upkeep.
    env = cli_env(DATABASE_URL=service_url(empty_database_url), ENGRAM_OWNER_DATABASE_URL=empty_database_url)
    after = run_cli("remember", "just in time", "--tenant", "acme", cwd=workdir, env=env)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["status"] == "active"
    third = run_cli("migrate", cwd=workdir, env=env)
    assert third.returncode == 0 and third.stdout.strip() == "schema is up to date", third.stderr


def test_migrate_an_unreachable_database_exits_7(workdir: Path, tmp_path: Path) -> None:
    url = f"postgresql://postgres@/engram?host={tmp_path / 'no-such-socket-dir'}&connect_timeout=2"
    r = run_cli("migrate", cwd=workdir, env=cli_env(DATABASE_URL=url), timeout=60)
    assert r.returncode == 7, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr


def test_migrate_the_embedded_database(data_dir: Path, workdir: Path) -> None:
    """The session template was made by `engram migrate --data-dir` on an empty directory (it asserts
    "applied 0001_foundation"); on that initialised copy there is nothing left to do."""
    r = run_cli("migrate", "--data-dir", data_dir, cwd=workdir)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "schema is up to date"
    assert postmaster_pid(data_dir) is None, "migrate stops the PostgreSQL it started"
