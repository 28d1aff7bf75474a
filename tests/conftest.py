"""Shared fixtures: one embedded PostgreSQL per test session, a migrated template database, and a fresh
database per test cloned from it (so each test has its own schema and data)."""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from engram import Engram, HashingEmbedder, Settings
from engram.providers.base import Vector
from engram.store import embeddings as emb
from engram.store.embedded import EmbeddedPostgres
from engram.store.migrate import migrate
from tests.chat_server import ChatServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The tests never use the developer's own data directory (~/.local/share/engram): its vault key and subject
# keys leaked into the tests' tenants (a `vault rotate` test failed after `make run` had made them), the
# tests' keys and files leaked into it, and a server `make run` started there was found by the CLI tests.
_DATA_DIR = tempfile.TemporaryDirectory(prefix="engram-tests-")
os.environ["ENGRAM_DATA_DIR"] = _DATA_DIR.name

TEMPLATE = "engram_template"
_SERVICE_PASSWORD: list[str] = []  # the session cluster's service login (set by ``template_db``)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("pg"))
    server.start()
    server.started_here = True  # always stop what the test session started
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
async def template_db(pg_server: EmbeddedPostgres) -> str:
    admin = pg_server.admin_conninfo()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    url = pg_server.admin_conninfo(TEMPLATE)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        from psycopg.rows import dict_row

        conn.row_factory = dict_row  # type: ignore[assignment]
        await migrate(conn)  # type: ignore[arg-type]
        hashing = HashingEmbedder()
        await emb.register_model(conn, hashing.model_id, hashing.dimensions)  # type: ignore[arg-type]
    pg_server.provision_service_login()  # the service's pool logs in as engram_app, as it does in production
    _SERVICE_PASSWORD[:] = [pg_server.service_password()]
    return url


def _clone(pg_server: EmbeddedPostgres, template: str) -> tuple[str, str]:
    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server.admin_conninfo(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    return name, pg_server.admin_conninfo(name)


def _drop(pg_server: EmbeddedPostgres, name: str) -> None:
    with psycopg.connect(pg_server.admin_conninfo(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def database_url(pg_server: EmbeddedPostgres, template_db: str) -> Iterator[str]:
    """A fresh, migrated database for one test."""
    name, url = _clone(pg_server, TEMPLATE)
    try:
        yield url
    finally:
        _drop(pg_server, name)


@pytest.fixture
def empty_database_url(pg_server: EmbeddedPostgres, template_db: str) -> Iterator[str]:
    """A fresh database with no schema at all (in the cluster whose service login ``template_db`` set up)."""
    name, url = _clone(pg_server, "template1")
    try:
        yield url
    finally:
        _drop(pg_server, name)


def service_url(owner_url: str) -> str:
    """The same database, as the service's least-privileged login (engram_app with its password)."""
    return re.sub(r"^postgresql://[^:@/]*:[^@/]*@", f"postgresql://engram_app:{_SERVICE_PASSWORD[0]}@", owner_url)


def settings_for(url: str, **kw: object) -> Settings:
    """Settings for a test database: the pool logs in as the service role, ``url`` (a superuser) owns it."""
    # Webhooks go to the tests' receivers on this machine (tests/receiver.py), which the default refuses.
    options: dict[str, object] = {
        "vault_keys": TEST_VAULT_KEYS, "webhook_allowed_hosts": "127.0.0.1",
        "subject_keys_dir": SUBJECT_KEYS / urlsplit(url).path.strip("/"), **kw,  # one per test database
    }  # fmt: skip
    return Settings(
        database_url=service_url(url),
        owner_database_url=url,
        data_dir=Path("/nonexistent"),
        **options,  # type: ignore[arg-type]
    )


# Users' vault data keys of the test session: a directory per test database (files, as in production).
SUBJECT_KEYS = Path(tempfile.mkdtemp(prefix="engram-subject-keys-"))

# The vault key of every test database (32 bytes, base64): fixed, so that a test can open what it sealed.
TEST_VAULT_KEYS = "test1:" + "dGVzdC12YXVsdC1rZXktMzItYnl0ZXMtZXhhY3RseSE="


@pytest.fixture
async def engram(database_url: str) -> AsyncIterator[Engram]:
    mem = await Engram.open(settings_for(database_url), embedder=HashingEmbedder(), tenant="acme")
    try:
        yield mem
    finally:
        await mem.close()


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, keeping every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.seen.extend(texts)
        return await super().embed(texts)


@pytest.fixture
async def recorded(database_url: str) -> AsyncIterator[tuple[Engram, RecordingEmbedder]]:
    embedder = RecordingEmbedder()
    mem = await Engram.open(settings_for(database_url), embedder=embedder, tenant="acme")
    try:
        yield mem, embedder
    finally:
        await mem.close()


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    """A chat-completions endpoint on 127.0.0.1 answering from a script (tests/chat_server.py)."""
    server = ChatServer()
    try:
        yield server
    finally:
        server.close()
