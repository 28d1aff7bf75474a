"""`engram doctor` as a user runs it: against a good installation, an empty data directory, a PostgreSQL
without pgvector, and an unreachable Redis, each finding with its fix; and it changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import cli_env, run_cli

MACHINE_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"  # PostgreSQL 15 without pgvector


def checks(stdout: str) -> dict[str, dict[str, Any]]:
    body = json.loads(stdout)
    return {c["name"]: c for c in body["checks"]}


def test_a_healthy_installation_with_its_server_passes(data_dir: Path, workdir: Path, serve: Any) -> None:
    server = serve(data_dir)
    env = cli_env(REDIS_URL="redis://127.0.0.1:6379/0")
    r = run_cli("doctor", "--json", "--url", server.url, "--data-dir", data_dir, cwd=workdir, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    found = checks(r.stdout)
    for name in ("database", "pgvector", "pg_trgm", "migrations", "login", "embedder", "redis", "server"):
        assert found[name]["status"] == "ok", found[name]
    assert "schema up to date" in found["migrations"]["detail"]
    assert "hashing" in found["embedder"]["detail"]
    text = run_cli("doctor", "--url", server.url, "--data-dir", data_dir, cwd=workdir, env=env)
    assert text.returncode == 0 and "pgvector" in text.stdout and "fail" not in text.stdout, text.stdout


def test_an_empty_data_directory_fails_with_the_fix_and_stays_empty(tmp_path: Path, workdir: Path) -> None:
    empty = tmp_path / "nothing-here"
    r = run_cli("doctor", "--json", "--url", "http://127.0.0.1:9", "--data-dir", empty, cwd=workdir)
    assert r.returncode == 1, r.stdout + r.stderr
    db = checks(r.stdout)["database"]
    assert db["status"] == "fail" and "engram migrate" in db["fix"], db
    assert checks(r.stdout)["server"]["status"] == "skip"
    assert not (empty / "pgdata").exists(), "doctor must not create a database"


def test_a_postgres_without_pgvector_and_a_dead_redis_are_named(workdir: Path) -> None:
    env = cli_env(DATABASE_URL=MACHINE_POSTGRES, REDIS_URL="redis://127.0.0.1:1/0")
    r = run_cli("doctor", "--json", "--url", "http://127.0.0.1:9", cwd=workdir, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    found = checks(r.stdout)
    assert found["database"]["status"] == "ok" and "PostgreSQL 15" in found["database"]["detail"]
    assert found["pgvector"]["status"] == "fail" and "pgvector" in found["pgvector"]["fix"]
    assert found["migrations"]["status"] == "fail" and found["migrations"]["fix"] == "run `engram migrate`"
    assert found["redis"]["status"] == "fail" and "REDIS_URL" in found["redis"]["fix"]
    assert "0001_foundation" in found["migrations"]["detail"]
