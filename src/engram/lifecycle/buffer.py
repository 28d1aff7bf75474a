"""The conversation buffer (SPEC 6.2): a session's recent turns, in Redis when ``REDIS_URL`` is set and in
PostgreSQL otherwise, behind one interface.

A turn is acknowledged only once the buffer holds it: when Redis cannot be reached the append fails loudly
(StoreUnavailable, a 503) and nothing is acknowledged. Turns leave the buffer only after the memories made
of them are written (``peek``, write, ``drop``), and the writes are idempotent (external ids per turn), so a
crash between the two condenses the same turns again into the same memories.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

from engram.errors import StoreUnavailable
from engram.model.conversation import BufferedTurn
from engram.store import turns as store
from engram.store.database import Database

LOCK_SECONDS = 60  # a condensing process that died gives its session up after this


class Buffer(Protocol):
    kind: str

    async def append(self, tenant_id: str, session_id: str, turn: BufferedTurn) -> int:
        """Store the turn (its ``seq`` is given here); returns the turns now waiting."""
        ...

    async def peek(self, tenant_id: str, session_id: str, n: int) -> list[BufferedTurn]: ...

    async def drop(self, tenant_id: str, session_id: str, seqs: list[int]) -> None: ...

    def condensing(self, tenant_id: str, session_id: str) -> Any:
        """An async context manager yielding whether this process may condense the session now."""
        ...

    async def forget_user(self, tenant_id: str, user_id: str) -> int:
        """Remove the user's turns; returns how many."""
        ...

    async def aclose(self) -> None: ...


class PostgresBuffer:
    kind = "postgresql"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def append(self, tenant_id: str, session_id: str, turn: BufferedTurn) -> int:
        async with self.db.tenant(tenant_id) as conn:
            return await store.append(conn, tenant_id, session_id, turn.model_dump())

    async def peek(self, tenant_id: str, session_id: str, n: int) -> list[BufferedTurn]:
        async with self.db.tenant(tenant_id) as conn:
            rows = await store.peek(conn, tenant_id, session_id, n)
        return [BufferedTurn(**r) for r in rows]

    async def drop(self, tenant_id: str, session_id: str, seqs: list[int]) -> None:
        async with self.db.tenant(tenant_id) as conn:
            await store.drop(conn, tenant_id, session_id, seqs)

    @asynccontextmanager
    async def condensing(self, tenant_id: str, session_id: str) -> AsyncIterator[bool]:
        async with self.db.tenant(tenant_id) as conn:  # held for the condensing: a session-scoped lock
            yield await store.try_lock(conn, tenant_id, session_id)

    async def forget_user(self, tenant_id: str, user_id: str) -> int:
        async with self.db.tenant(tenant_id) as conn:
            return await store.forget_user(conn, tenant_id, user_id)

    async def aclose(self) -> None:
        pass


class RedisBuffer:
    """One list per session (JSON turns, oldest first), a counter for turn numbers, a set of each user's
    sessions (so a user can be forgotten), and a lock per session while it is condensed."""

    kind = "redis"

    def __init__(self, url: str, prefix: str = "engram") -> None:
        import redis.asyncio as redis

        self.prefix = prefix
        self._redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2, decode_responses=True)

    def _key(self, what: str, tenant_id: str, name: str) -> str:
        return f"{self.prefix}:{what}:{tenant_id}:{name}"

    @asynccontextmanager
    async def _reachable(self) -> AsyncIterator[None]:
        import redis.exceptions

        try:
            yield
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(
                f"the conversation buffer (Redis) cannot be reached ({exc}); nothing was stored: retry later"
            ) from exc

    async def append(self, tenant_id: str, session_id: str, turn: BufferedTurn) -> int:
        async with self._reachable():
            seq = int(await self._redis.incr(self._key("bufseq", tenant_id, session_id)))
            item = turn.model_copy(update={"seq": seq}).model_dump_json()
            pipe = self._redis.pipeline(transaction=True)
            pipe.rpush(self._key("buf", tenant_id, session_id), item)
            if turn.user_id is not None:
                pipe.sadd(self._key("bufuser", tenant_id, turn.user_id), session_id)
            length, *_ = await pipe.execute()
            return int(length)

    async def peek(self, tenant_id: str, session_id: str, n: int) -> list[BufferedTurn]:
        async with self._reachable():
            items = await self._redis.lrange(self._key("buf", tenant_id, session_id), 0, n - 1)
        return [BufferedTurn(**json.loads(i)) for i in items]

    async def drop(self, tenant_id: str, session_id: str, seqs: list[int]) -> None:
        key = self._key("buf", tenant_id, session_id)
        wanted = set(seqs)
        async with self._reachable():
            for item in await self._redis.lrange(key, 0, len(seqs) - 1):
                if json.loads(item)["seq"] in wanted:
                    await self._redis.lrem(key, 1, str(item))

    @asynccontextmanager
    async def condensing(self, tenant_id: str, session_id: str) -> AsyncIterator[bool]:
        key, token = self._key("buflock", tenant_id, session_id), uuid.uuid4().hex
        async with self._reachable():
            mine = bool(await self._redis.set(key, token, nx=True, ex=LOCK_SECONDS))
        try:
            yield mine
        finally:
            if mine:
                async with self._reachable():
                    if await self._redis.get(key) == token:
                        await self._redis.delete(key)

    async def forget_user(self, tenant_id: str, user_id: str) -> int:
        index = self._key("bufuser", tenant_id, user_id)
        removed = 0
        async with self._reachable():
            for session_id in await self._redis.smembers(index):
                key = self._key("buf", tenant_id, str(session_id))
                for item in await self._redis.lrange(key, 0, -1):
                    if json.loads(item).get("user_id") == user_id:
                        removed += int(await self._redis.lrem(key, 0, str(item)))
            await self._redis.delete(index)
        return removed

    async def keys(self, tenant_id: str) -> list[str]:
        """Every key this buffer holds for the tenant (tests and forget's checks)."""
        async with self._reachable():
            return [k async for k in self._redis.scan_iter(match=f"{self.prefix}:*:{tenant_id}:*")]

    async def aclose(self) -> None:
        await self._redis.aclose()
