"""How CLI commands find the `engram serve` of their data directory: serve writes ``server.json`` there (its
URL, pid and a local operator token, readable by the directory's owner only) and removes it on exit.

The token stands for the same trust the CLI has in process: whoever can read the data directory can open the
embedded database itself. The server takes it only with ``X-Engram-Tenant`` naming the tenant to act for, as
an in-process caller would (``Principal.local``). Standard library only: read on every CLI start."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

FILE = "server.json"
TOKEN_PREFIX = "egl_"  # noqa: S105 - a prefix that marks local tokens, not a secret
TENANT_HEADER = "X-Engram-Tenant"


@dataclass(frozen=True)
class LocalServer:
    url: str
    pid: int
    token: str


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def publish(data_dir: Path, url: str, token: str) -> Path:
    """Write the data directory's server file (0600, atomically) for this process."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / FILE
    tmp = data_dir / f".{FILE}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"url": url, "pid": os.getpid(), "token": token}, f)
    tmp.replace(path)
    return path


def withdraw(data_dir: Path) -> None:
    """Remove the server file if it is this process's."""
    found = read(data_dir, alive_only=False)
    if found is not None and found.pid == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            (data_dir / FILE).unlink()


def read(data_dir: Path, *, alive_only: bool = True) -> LocalServer | None:
    """The server running on ``data_dir``, or None (no file, an unreadable one, or its process is gone)."""
    try:
        body = json.loads((data_dir / FILE).read_text())
        found = LocalServer(str(body["url"]), int(body["pid"]), str(body["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if alive_only and not _alive(found.pid):
        return None
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True
