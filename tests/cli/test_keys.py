"""`engram keys create | list | revoke` as real processes on a real embedded PostgreSQL."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.cli.conftest import KEY_PATTERN, flat, postmaster_pid, run_cli


def _create(
    data_dir: Path, cwd: Path, *extra: str, tenant: str = "acme", role: str = "agent"
) -> subprocess.CompletedProcess[str]:
    return run_cli("keys", "create", "--tenant", tenant, "--role", role, "--data-dir", data_dir, *extra, cwd=cwd)


def _list_lines(data_dir: Path, cwd: Path, tenant: str = "acme") -> list[str]:
    r = run_cli("keys", "list", "--tenant", tenant, "--data-dir", data_dir, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line.strip()]


def test_create_prints_the_key_alone_on_the_last_line(fresh_data_dir: Path, workdir: Path) -> None:
    data_dir = fresh_data_dir  # the very first command on a new data dir (initdb, migrations) is this one
    r = _create(data_dir, workdir)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines, "nothing on stdout"
    key = lines[-1]
    assert re.fullmatch(KEY_PATTERN, key), f"last stdout line is not a key: {key!r}"
    assert key not in r.stderr, "the secret must only go to stdout"
    assert "acme" in r.stderr  # the human-readable confirmation names the tenant
    # The process stopped the embedded PostgreSQL it started.
    assert postmaster_pid(data_dir) is None


def test_bad_role_exits_2_and_names_the_option(data_dir: Path, workdir: Path) -> None:
    r = _create(data_dir, workdir, role="boss")
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "--role" in r.stderr
    assert "boss" in r.stderr
    assert not re.search(r"egm_", r.stdout), "no key may be printed on failure"


def test_bad_tenant_exits_2_and_names_the_tenant(data_dir: Path, workdir: Path) -> None:
    r = _create(data_dir, workdir, tenant="has space")
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "tenant" in r.stderr.lower(), r.stderr
    assert "Traceback" not in r.stderr
    assert not re.search(r"egm_", r.stdout), "no key may be printed on failure"
    # ... and nothing was created for it.
    listed = run_cli("keys", "list", "--tenant", "has space", "--data-dir", data_dir, cwd=workdir)
    assert listed.returncode == 2 and "not a valid tenant id" in flat(listed.stderr)


def test_list_and_revoke(data_dir: Path, workdir: Path) -> None:
    # A name is data, not console markup, and a long one must not break the one-line-per-key layout.
    name = "deploy [prod] [/] bot with a fairly long descriptive name"
    agent = _create(data_dir, workdir, "--name", name).stdout.splitlines()[-1]
    admin = _create(data_dir, workdir, role="admin").stdout.splitlines()[-1]
    other = _create(data_dir, workdir, tenant="globex").stdout.splitlines()[-1]
    assert len({agent, admin, other}) == 3 and re.fullmatch(KEY_PATTERN, admin)

    lines = _list_lines(data_dir, workdir)
    text = "\n".join(lines)
    assert len(lines) == 2, text  # one line per key, and only this tenant's keys
    assert agent[:10] in text and admin[:10] in text
    assert other[:10] not in text
    assert agent not in text and admin not in text, "keys list must never print a secret"
    (agent_line,) = [ln for ln in lines if agent[:10] in ln]
    assert " agent " in agent_line and " active " in agent_line
    assert agent_line.rstrip().endswith(name), agent_line
    (admin_line,) = [ln for ln in lines if admin[:10] in ln]
    assert " admin " in admin_line and " active " in admin_line
    agent_id, admin_id = agent_line.split()[0], admin_line.split()[0]

    r = run_cli("keys", "revoke", "--tenant", "acme", agent_id, "--data-dir", data_dir, cwd=workdir)
    assert r.returncode == 0, r.stderr
    assert f"revoked {agent_id}" in r.stdout
    states = {ln.split()[0]: ln.split()[3] for ln in _list_lines(data_dir, workdir)}
    assert states == {agent_id: "revoked", admin_id: "active"}

    # Revoking again, or from another tenant, finds no active key: exit 3 (not found).
    again = run_cli("keys", "revoke", "--tenant", "acme", agent_id, "--data-dir", data_dir, cwd=workdir)
    assert again.returncode == 3, (again.stdout, again.stderr)
    assert agent_id in flat(again.stderr)
    elsewhere = run_cli("keys", "revoke", "--tenant", "globex", admin_id, "--data-dir", data_dir, cwd=workdir)
    assert elsewhere.returncode == 3, (elsewhere.stdout, elsewhere.stderr)


def test_revoke_rejects_a_malformed_id(data_dir: Path, workdir: Path) -> None:
    r = run_cli("keys", "revoke", "--tenant", "acme", "not-a-uuid", "--data-dir", data_dir, cwd=workdir)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not-a-uuid" in r.stderr
