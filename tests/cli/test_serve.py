"""`engram serve` as a real process on the real embedded PostgreSQL: start-up, keys created by another
process while it runs, durability across crashes and graceful restarts, tenant isolation over HTTP."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import ENGRAM, KEY_PATTERN, Server, cli_env, create_key, flat, postmaster_pid

pytestmark = pytest.mark.slow

Serve = Callable[..., Server]
N = 50


def _wait_for_output(server: Server, text: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while text not in server.stdout:
        if time.monotonic() > deadline:
            pytest.fail(f"{text!r} not printed on stdout: {server.describe()}")
        time.sleep(0.05)


def _write_many(client: httpx.Client, n: int = N) -> dict[str, str]:
    """Write n memories one by one; every write must be acknowledged with 201. Returns id -> content."""
    written: dict[str, str] = {}
    for i in range(n):
        content = f"memory {i} of {n}: {uuid.uuid4().hex}"
        r = client.post("/v1/memories", json={"content": content})
        assert r.status_code == 201, (i, r.status_code, r.text)
        written[r.json()["id"]] = content
    assert len(written) == n, "every write must get its own id"
    return written


def _assert_all_readable(client: httpx.Client, written: dict[str, str]) -> None:
    missing = []
    for memory_id, content in written.items():
        r = client.get(f"/v1/memories/{memory_id}")
        if r.status_code != 200 or r.json()["content"] != content:
            missing.append((memory_id, r.status_code, r.text[:200]))
    assert not missing, f"{len(missing)} of {len(written)} acknowledged writes lost: {missing[:5]}"


def test_serve_announces_itself_and_accepts_a_key_created_while_it_runs(
    fresh_data_dir: Path, workdir: Path, serve: Serve
) -> None:
    data_dir = fresh_data_dir  # serve initialises a new data dir itself
    server = serve(data_dir)
    _wait_for_output(server, f"listening on http://127.0.0.1:{server.port}")
    # The announcement is one line, with the docs URL on it (stdout is not wrapped when piped).
    (line,) = [ln for ln in server.stdout.splitlines() if "listening on" in ln]
    assert f"http://127.0.0.1:{server.port}/docs" in line
    pg = postmaster_pid(data_dir)
    assert pg is not None, "serve runs on an embedded PostgreSQL in its data dir"

    with server.client() as anonymous:
        assert anonymous.post("/v1/memories", json={"content": "x"}).status_code == 401
        health = anonymous.get("/healthz").json()
        assert health["status"] == "ok" and health["database"] == "ok"
        assert health["embedding_model"] == "engram/hashing-384"

    # The key command it prints runs as printed, from where serve was started, without the venv on the PATH.
    (hint,) = [ln for ln in server.stdout.splitlines() if "Create an API key" in ln]
    printed = shlex.split(hint.split(":  ", 1)[1])
    assert printed[0] != "engram" or shutil.which("engram", path=cli_env()["PATH"]) is not None
    path = ":".join(p for p in cli_env()["PATH"].split(":") if Path(p).resolve() != ENGRAM.parent.resolve())
    made = subprocess.run(printed, cwd=workdir, env=cli_env(PATH=path), capture_output=True, text=True, timeout=60)
    assert made.returncode == 0 and re.match(KEY_PATTERN, made.stdout.splitlines()[-1]), made.stderr

    key = create_key(data_dir, workdir, "acme")  # a separate process on the same data dir

    with server.client(key) as client:
        r = client.post("/v1/memories", json={"content": "hello world"})
        assert r.status_code == 201, r.text
        memory_id = r.json()["id"]
        assert r.headers["Location"] == f"/v1/memories/{memory_id}"

        # The keys process left the server's PostgreSQL running: serve keeps working.
        assert server.proc.poll() is None
        assert postmaster_pid(data_dir) == pg
        got = client.get(f"/v1/memories/{memory_id}")
        assert got.status_code == 200 and got.json()["content"] == "hello world"
        assert got.json()["tenant_id"] == "acme"
        again = client.post("/v1/memories", json={"content": "still here"})
        assert again.status_code == 201, again.text
        assert client.get("/healthz").status_code == 200

    with server.client("egm_" + "A" * 43) as wrong:
        assert wrong.get(f"/v1/memories/{memory_id}").status_code == 401

    assert server.signal(signal.SIGINT) in (0, 130), server.describe()
    assert postmaster_pid(data_dir) is None, "serve started the embedded PostgreSQL, so it stops it on exit"


def test_acknowledged_writes_survive_sigkill_and_the_postgres_left_behind_is_reused(
    data_dir: Path, workdir: Path, serve: Serve
) -> None:
    first = serve(data_dir)
    key = create_key(data_dir, workdir, "acme")
    with first.client(key) as client:
        written = _write_many(client)
    pg = postmaster_pid(data_dir)
    assert pg is not None

    assert first.signal(signal.SIGKILL) == -signal.SIGKILL
    assert postmaster_pid(data_dir) == pg, "a crashed serve leaves its PostgreSQL running"

    second = serve(data_dir)  # new port, same data dir
    assert postmaster_pid(data_dir) == pg, "the restarted serve reuses the running PostgreSQL"
    assert not re.search(r"Traceback|\bERROR\b|^error:", second.stderr, re.M), second.describe()
    with second.client(key) as client:
        _assert_all_readable(client, written)
        assert client.post("/v1/memories", json={"content": "after the crash"}).status_code == 201

    # It did not start that PostgreSQL, so it leaves it running when it stops.
    assert second.signal(signal.SIGINT) in (0, 130), second.describe()
    assert postmaster_pid(data_dir) == pg


def test_acknowledged_writes_survive_a_postgres_crash(data_dir: Path, workdir: Path, serve: Serve) -> None:
    """Kill -9 both serve and its PostgreSQL: a 201 means committed, so crash recovery brings it all back."""
    first = serve(data_dir)
    key = create_key(data_dir, workdir, "acme")
    state = {"goal": "Refund INV-7", "completed_steps": ["read invoice"], "tool_results": {"inv": {"value": [1, 2]}}}
    with first.client(key) as client:
        written = _write_many(client)
        put = client.put("/v1/workflows/wf-crash/state", json=state)
        assert put.status_code == 201, put.text
        acknowledged = put.json()
    pg = postmaster_pid(data_dir)
    assert pg is not None
    first.signal(signal.SIGKILL)
    os.kill(pg, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while postmaster_pid(data_dir) is not None:
        assert time.monotonic() < deadline, "the killed postmaster did not go away"
        time.sleep(0.1)

    second = serve(data_dir)
    assert postmaster_pid(data_dir) not in (None, pg)
    with second.client(key) as client:
        _assert_all_readable(client, written)
        assert client.get("/v1/workflows/wf-crash/state").json() == acknowledged  # the workflow resumes exactly


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_acknowledged_writes_survive_a_graceful_restart(
    data_dir: Path, workdir: Path, serve: Serve, sig: signal.Signals
) -> None:
    first = serve(data_dir)
    key = create_key(data_dir, workdir, "acme")
    with first.client(key) as client:
        written = _write_many(client)

    code = first.signal(sig)
    # A graceful stop: the process unwinds (exit 0, or 128+signal) rather than dying from the signal,
    # and stops the embedded PostgreSQL it started.
    assert code in (0, 128 + sig), first.describe()
    assert postmaster_pid(data_dir) is None, f"PostgreSQL still running after {sig.name}: {first.describe()}"

    second = serve(data_dir)
    with second.client(key) as client:
        _assert_all_readable(client, written)
    assert second.signal(sig) in (0, 128 + sig), second.describe()
    assert postmaster_pid(data_dir) is None


def test_writes_to_another_tenants_memory_answer_404(data_dir: Path, workdir: Path, serve: Serve) -> None:
    server = serve(data_dir)
    key_a = create_key(data_dir, workdir, "acme")
    key_b = create_key(data_dir, workdir, "globex", role="admin")  # may do anything, in its own tenant

    with server.client(key_a) as a, server.client(key_b) as b:
        r = a.post("/v1/memories", json={"content": "acme's secret plan", "tags": ["plan"]})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        path = f"/v1/memories/{mid}"

        assert b.get(path).status_code == 404
        patch = b.patch(path, json={"content": "overwritten by globex"}, headers={"If-Match": '"1"'})
        assert patch.status_code == 404, patch.text
        assert patch.json()["error"]["code"]  # the standard error body, no details about the row
        assert "acme" not in patch.text
        assert b.post(f"{path}/archive").status_code == 404
        assert b.delete(path, headers={"If-Match": '"1"'}).status_code == 404
        assert b.get(f"{path}/history").status_code == 404
        listed = b.get("/v1/memories")
        assert listed.status_code == 200 and listed.json()["items"] == []

        # The owner sees it untouched.
        got = a.get(path)
        assert got.status_code == 200
        body = got.json()
        assert (body["content"], body["revision"], body["status"]) == ("acme's secret plan", 1, "active")
        assert got.headers["ETag"] == '"1"'

        # And the same requests from the owner do work (so the 404s above were about the tenant).
        ok = a.patch(path, json={"content": "acme's revised plan"}, headers={"If-Match": '"1"'})
        assert ok.status_code == 200, ok.text
        assert ok.json()["revision"] == 2


def test_serve_on_a_busy_port_fails_and_stops_its_postgres(data_dir: Path, serve: Serve) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        server = serve(data_dir, wait=False, port=busy.getsockname()[1])
        try:
            code = server.proc.wait(60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not exit on a busy port: {server.describe()}")
    assert code != 0, server.describe()
    assert "address already in use" in flat(server.stderr).lower(), server.describe()
    assert postmaster_pid(data_dir) is None, "the PostgreSQL it started must be stopped again"
    assert code == 2, server.describe()  # a usage problem, named: --port
    assert "listening on" not in server.stdout
    assert "--port" in flat(server.stderr)
