"""`engram doctor`: each part Engram depends on, checked in turn, with what to do when one is wrong.

A check never raises: a failure is a finding. Nothing is created or changed (an embedded data directory with no
database stays empty; pending migrations stay pending)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Literal

import httpx

from engram.config import Settings
from engram.errors import EngramError
from engram.store import doctor as facts
from engram.store import reembed as reembed_store
from engram.store.database import Database, check_login, redact
from engram.store.migrate import applied, available

Status = Literal["ok", "warn", "fail", "skip"]
MIN_SERVER = 140000  # PostgreSQL 14
MIN_VECTOR = (0, 8)


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)


async def diagnose(settings: Settings, *, server_url: str | None = None) -> list[Check]:
    """Every check, in the order a user would fix them: the database first, then what runs on it."""
    checks = await _database(settings)
    checks.append(await _guarded("embedder", lambda: _embedder(settings)))
    checks.append(await _guarded("redis", lambda: _redis(settings)))
    checks.append(await _guarded("vault", lambda: _vault(settings)))
    checks.append(await _guarded("server", lambda: _server(server_url or f"http://{settings.host}:{settings.port}")))
    return checks


async def _guarded(name: str, check: Callable[[], Awaitable[Check]]) -> Check:
    try:
        return await check()
    except EngramError as exc:
        return Check(name, "fail", exc.message)
    except Exception as exc:  # a check must report, whatever broke
        return Check(name, "fail", f"{type(exc).__name__}: {exc}")


async def _database(settings: Settings) -> list[Check]:
    from engram.service.opening import locate_database

    where_text = (
        redact(settings.database_url.get_secret_value())
        if settings.database_url is not None
        else f"embedded, in {settings.data_dir}"
    )
    try:
        where = await locate_database(settings, create=False)
    except EngramError as exc:
        fix = (
            "`engram serve` or `engram migrate` creates it; or point --data-dir / ENGRAM_DATA_DIR at the right one"
            if settings.database_url is None
            else "check DATABASE_URL (host, port, login, password) and that PostgreSQL is running"
        )
        return [Check("database", "fail", f"{where_text}: {exc.message}", fix)]
    try:
        return await _inspect(Database(where.service), where_text, settings)
    except EngramError as exc:
        return [Check("database", "fail", f"{where_text}: {exc.message}", "check that PostgreSQL accepts the login")]
    finally:
        if where.embedded is not None:
            await asyncio.to_thread(where.embedded.stop)


async def _inspect(db: Database, where: str, settings: Settings) -> list[Check]:
    async with db.direct() as conn:
        server = await facts.server_facts(conn)
        done = await applied(conn)
        login_problem: str | None = None
        try:
            await check_login(conn)
        except EngramError as exc:
            login_problem = exc.message
        moved = None
        if done:
            from engram.providers.factory import build_embedder

            try:
                moved = await reembed_store.switched_from(conn, build_embedder(settings).model_id)
            except EngramError:
                moved = None  # the embedder check reports the configuration
    checks = [Check("database", "ok", f"{where}: PostgreSQL {server['version']}")]
    if server["version_num"] < MIN_SERVER:
        checks.append(
            Check("postgres_version", "fail", f"PostgreSQL {server['version']}", "use PostgreSQL 14 or newer")
        )
    checks.append(_vector(server))
    checks.append(_trgm(server))
    pending = [m for m in available() if m.version not in done]
    if pending:
        names = ", ".join(f"{m.version:04d}_{m.name}" for m in pending[:3]) + (" ..." if len(pending) > 3 else "")
        checks.append(Check("migrations", "fail", f"{len(pending)} pending: {names}", "run `engram migrate`"))
    else:
        checks.append(Check("migrations", "ok", f"{len(done)} applied, schema up to date"))
    if login_problem:
        checks.append(Check("login", "fail", login_problem, "see docs/security.md, 'The service's login'"))
    else:
        checks.append(Check("login", "ok", "held to row-level security (not a superuser, BYPASSRLS or the owner)"))
    if moved is not None:
        checks.append(
            Check(
                "embedding_model",
                "warn",
                f"reads moved to {moved['to_spec']} (`engram reembed`); this configuration embeds with another model",
                f"configure the embedder as {moved['to_spec']} (ENGRAM_EMBEDDER and its settings) so that processes "
                "start with it",
            )
        )
    return checks


def _version(text: str | None) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in (text or "").split(".")[:2])
    except ValueError:
        return ()


def _vector(server: dict[str, str | None]) -> Check:
    installed, offered = server["vector"], server["vector_available"]
    if installed is None:
        if offered is None:
            return Check("pgvector", "fail", "not available on this server", "install pgvector 0.8 or newer")
        return Check("pgvector", "fail", f"{offered} available, not installed", "run `engram migrate` as the owner")
    if _version(installed) < MIN_VECTOR:
        return Check("pgvector", "fail", f"{installed} installed", "ALTER EXTENSION vector UPDATE (0.8 or newer)")
    return Check("pgvector", "ok", f"{installed} installed")


def _trgm(server: dict[str, str | None]) -> Check:
    if server["pg_trgm"] is None:
        fix = "run `engram migrate` as the owner" if server["pg_trgm_available"] else "install PostgreSQL's contrib"
        return Check("pg_trgm", "fail", "not installed", fix)
    return Check("pg_trgm", "ok", f"{server['pg_trgm']} installed")


async def _embedder(settings: Settings) -> Check:
    from engram.providers.factory import build_embedder

    embedder = build_embedder(settings)
    started = time.perf_counter()
    load = getattr(embedder, "load", None)
    if callable(load):
        await asyncio.to_thread(load)
    vectors = await embedder.embed(["engram doctor"])
    took = (time.perf_counter() - started) * 1000
    if len(vectors) != 1 or len(vectors[0]) != embedder.dimensions:
        return Check("embedder", "fail", f"{embedder.model_id} answered with the wrong shape", "check the model")
    return Check(
        "embedder", "ok", f"{embedder.model_id}, {embedder.dimensions} dimensions, first vector in {took:,.0f} ms"
    )


async def _redis(settings: Settings) -> Check:
    if settings.redis_url is None:
        return Check("redis", "skip", "REDIS_URL not set: the conversation buffer is in PostgreSQL")
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    client = Redis.from_url(settings.redis_url.get_secret_value(), socket_connect_timeout=2, socket_timeout=2)
    try:
        await client.ping()
        info = await client.info("server")
    except (RedisError, OSError) as exc:
        return Check("redis", "fail", f"cannot reach {redact(settings.redis_url.get_secret_value())}: {exc}",
                     "start Redis or unset REDIS_URL (the buffer then lives in PostgreSQL)")  # fmt: skip
    finally:
        await client.aclose()
    return Check("redis", "ok", f"Redis {info.get('redis_version', '?')} answers")


async def _vault(settings: Settings) -> Check:
    from engram.service.keyring import KEY_FILE, Keyring

    if settings.vault_keys is not None:
        ring = Keyring.parse(settings.vault_keys.get_secret_value())
        return Check("vault", "ok", f"{len(ring.keys)} key(s) from ENGRAM_VAULT_KEYS, current {ring.current.key_id}")
    path = settings.data_dir / KEY_FILE
    if not path.exists():
        return Check("vault", "warn", f"no key file at {path} yet", "it is created on the first write of personal data")
    ring = Keyring.parse(path.read_text().strip())
    return Check("vault", "ok", f"{len(ring.keys)} key(s) in {path}, current {ring.current.key_id}")


async def _server(url: str) -> Check:
    try:
        async with httpx.AsyncClient(timeout=2.0) as client:
            r = await client.get(url.rstrip("/") + "/healthz")
    except httpx.HTTPError as exc:
        return Check("server", "skip", f"no Engram server at {url} ({type(exc).__name__})", "`engram serve` starts one")
    if r.status_code != 200:
        return Check("server", "warn", f"{url} answered {r.status_code}: {r.text[:200]}", "see the server's log")
    body = r.json()
    return Check("server", "ok", f"{url}: {body.get('status')}, database {body.get('database')}")
