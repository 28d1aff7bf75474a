"""`engram serve` as a subprocess on a test database (DATABASE_URL, the hashing embedder), for tests that need
a server to talk to over HTTP: the docs' client examples, the demo."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.cli.conftest import free_port
from tests.conftest import TEST_VAULT_KEYS, service_url

ENGRAM = Path(sys.executable).parent / "engram"


@dataclass
class Live:
    url: str
    env: dict[str, str]
    proc: subprocess.Popen[str]

    def key(self, tenant: str, role: str = "agent") -> str:
        """A new key (`engram keys create`), its secret."""
        made = subprocess.run([str(ENGRAM), "keys", "create", "--tenant", tenant, "--role", role], env=self.env,
                              capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
        return made.stdout.splitlines()[-1]


def server_env(owner_url: str, work: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "DATABASE_URL"}
    env.update(
        DATABASE_URL=service_url(owner_url), ENGRAM_OWNER_DATABASE_URL=owner_url, ENGRAM_EMBEDDER="hashing",
        ENGRAM_VAULT_KEYS=TEST_VAULT_KEYS, ENGRAM_DATA_DIR=str(work / "data"), HF_HUB_OFFLINE="1",
        ENGRAM_SUBJECT_KEYS_DIR=str(work / "subject-keys"), PYTHONUNBUFFERED="1",
    )  # fmt: skip
    env.update(extra)
    return env


@contextmanager
def live_server(owner_url: str, work: Path) -> Iterator[Live]:
    """A running `engram serve` on the database ``owner_url`` owns; killed on exit."""
    port = free_port()
    env = server_env(owner_url, work, ENGRAM_PORT=str(port))
    log = (work / f"serve-{port}.log").open("w")
    proc = subprocess.Popen([str(ENGRAM), "serve"], env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"engram serve exited: {(work / f'serve-{port}.log').read_text()}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("engram serve did not become healthy within 60 s")
            time.sleep(0.1)
        yield Live(url, env, proc)
    finally:
        proc.kill()
        proc.wait(30)
        log.close()
