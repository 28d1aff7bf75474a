"""`engram remember` and `engram get` as real processes on the embedded PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from subprocess import CompletedProcess

from tests.cli.conftest import flat, postmaster_pid, run_cli


def _remember(data_dir: Path, cwd: Path, *args: str, tenant: str = "acme") -> CompletedProcess[str]:
    return run_cli("remember", *args, "--tenant", tenant, "--data-dir", data_dir, cwd=cwd)


def _get(data_dir: Path, cwd: Path, memory_id: str, tenant: str = "acme") -> CompletedProcess[str]:
    return run_cli("get", memory_id, "--tenant", tenant, "--data-dir", data_dir, cwd=cwd)


def test_remember_then_get(data_dir: Path, workdir: Path) -> None:
    text = "Invoices go out in EUR, not USD"
    r = _remember(data_dir, workdir, text, "--kind", "semantic", "--tag", "billing", "--tag", "eu")
    assert r.returncode == 0, r.stderr
    written = json.loads(r.stdout)  # stdout is exactly one JSON document
    memory_id = str(uuid.UUID(written["id"]))
    assert written["revision"] == 1
    assert written["status"] == "active"
    assert written["replayed"] is False
    assert written["embedded"] is True  # the hashing embedder ran synchronously
    assert postmaster_pid(data_dir) is None, "remember stops the PostgreSQL it started"

    g = _get(data_dir, workdir, memory_id)
    assert g.returncode == 0, g.stderr
    mem = json.loads(g.stdout)
    assert mem["id"] == memory_id
    assert mem["content"] == text
    assert mem["tenant_id"] == "acme"
    assert mem["kind"] == "semantic"
    assert sorted(mem["tags"]) == ["billing", "eu"]
    assert mem["revision"] == 1

    # Another tenant cannot read it: not found, and nothing of it is shown.
    other = _get(data_dir, workdir, memory_id, tenant="globex")
    assert other.returncode == 3, (other.stdout, other.stderr)
    assert other.stdout == ""
    assert text not in other.stderr


def test_remember_with_the_same_external_id_replays(data_dir: Path, workdir: Path) -> None:
    first = json.loads(_remember(data_dir, workdir, "deploys happen on Tuesdays", "--external-id", "x1").stdout)
    again = _remember(data_dir, workdir, "deploys happen on Tuesdays", "--external-id", "x1")
    assert again.returncode == 0, again.stderr
    replay = json.loads(again.stdout)
    assert replay["id"] == first["id"]
    assert replay["replayed"] is True


def test_get_errors(data_dir: Path, workdir: Path) -> None:
    unknown = str(uuid.uuid4())
    r = _get(data_dir, workdir, unknown)
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert r.stdout == ""
    assert unknown in flat(r.stderr)
    assert "Traceback" not in r.stderr

    malformed = _get(data_dir, workdir, "not-a-uuid")
    assert malformed.returncode == 2, (malformed.stdout, malformed.stderr)
    assert "not-a-uuid" in malformed.stderr


def test_remember_empty_content_exits_2(data_dir: Path, workdir: Path) -> None:
    r = _remember(data_dir, workdir, "")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    assert "content" in r.stderr
    assert "Traceback" not in r.stderr


def test_remember_bad_kind_exits_2_and_names_the_field(data_dir: Path, workdir: Path) -> None:
    r = _remember(data_dir, workdir, "something", "--kind", "dream")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "kind" in r.stderr


def test_recall_prints_items_or_the_packet(data_dir: Path, workdir: Path) -> None:
    assert (
        _remember(
            data_dir, workdir, "Error 504 from the billing gateway means the invoice service timed out"
        ).returncode
        == 0
    )
    assert _remember(data_dir, workdir, "Error 502 from the billing gateway means a bad deploy").returncode == 0
    r = run_cli("recall", "Error 504", "--tenant", "acme", "--json", "--data-dir", data_dir, cwd=workdir)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    table = run_cli("recall", "Error 504", "--tenant", "acme", "--data-dir", data_dir, cwd=workdir)
    assert table.stdout.splitlines()[1].split()[:3] == ["1", f"{result['items'][0]['score']:.3f}", "episodic"]
    assert f"receipt {table.stdout.split('receipt ')[1].split()[0]}" in table.stdout
    assert "504" in result["items"][0]["content"] and result["receipt_id"]
    p = run_cli(
        "recall", "Error 504", "--tenant", "acme", "--packet", "--max-items", "1", "--data-dir", data_dir, cwd=workdir
    )
    assert p.returncode == 0 and "untrusted evidence" in p.stdout
    assert [line for line in p.stdout.splitlines() if line.startswith("[")] == [
        f"[1] {line.split('] ', 1)[1]}" for line in p.stdout.splitlines() if line.startswith("[1] ")
    ]
    assert "[1] " in p.stdout and "Error 504 from the billing gateway" in p.stdout and "[2] " not in p.stdout
    bad = run_cli("recall", "x", "--tenant", "acme", "--preset", "magic", "--data-dir", data_dir, cwd=workdir)
    assert bad.returncode == 2 and "preset" in flat(bad.stderr)


def test_reading_commands_do_not_create_a_database_where_there_is_none(tmp_path: Path, workdir: Path) -> None:
    nowhere = tmp_path / "misspelt-data-dir"
    for args in (
        ["get", "01a2351d-b304-746b-b0ef-14e68d8e1526", "--tenant", "acme"],
        ["recall", "anything", "--tenant", "acme"],
        ["keys", "list", "--tenant", "acme"],
    ):
        r = run_cli(*args, "--data-dir", nowhere, cwd=workdir)
        assert r.returncode == 7, (args, r.stdout, r.stderr)
        assert "no Engram database" in flat(r.stderr) and "Traceback" not in r.stderr
        assert not (nowhere / "pgdata").exists()
