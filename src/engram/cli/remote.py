"""The CLI's quick commands through a running server (``engram.client``): the same answers and errors as in
process, without loading the model or starting the database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from engram.client import AsyncClient
from engram.client._http import error_from
from engram.errors import EngramError

if TYPE_CHECKING:
    from engram.model import Memory
    from engram.model.memory import MemoryPage
    from engram.model.recall import RecallResult
    from engram.model.wire import WriteResponse


class Remote:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.where = client.url

    @classmethod
    @asynccontextmanager
    async def connect(cls, url: str, credential: str, headers: dict[str, str]) -> AsyncIterator[Remote]:
        async with AsyncClient(url, credential, headers=headers) as client:
            yield cls(client)

    async def remember_many(self, items: Sequence[dict[str, Any]]) -> list[WriteResponse | EngramError]:
        if len(items) == 1:  # one memory: the answer (and error) of POST /v1/memories itself
            try:
                return [await self.client.remember(items[0])]
            except EngramError as exc:
                return [exc]
        batch = await self.client.remember_many(items)
        return [
            r.result if r.ok and r.result is not None else error_from(r.error or {}, 0)
            for r in sorted(batch.results, key=lambda r: r.index)
        ]

    async def get(self, memory_id: str, *, reveal: bool) -> Memory:
        return await self.client.get(memory_id, reveal=reveal or None)

    async def list(self, *, limit: int, cursor: str | None, reveal: bool, filters: dict[str, Any]) -> MemoryPage:
        tags = filters.pop("tags", None) or ()
        return await self.client.list(limit=limit, cursor=cursor, tags=tags, reveal=reveal or None, **filters)

    async def recall(self, request: dict[str, Any]) -> RecallResult:
        return await self.client.recall(request)
