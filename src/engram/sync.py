"""A blocking facade over :class:`Engram` for scripts and notebooks: one private event loop thread."""

from __future__ import annotations

import asyncio
import builtins
import threading
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from engram.config import Settings
from engram.errors import EngramError
from engram.model import HistoryEntry, Memory, MemoryPage, MemoryPatch, WriteResult
from engram.model.access import ApiKey, NewKey
from engram.model.recall import RecallRequest, RecallResult, Receipt, Relation, RelationInput
from engram.providers.base import Embedder
from engram.service import EmbedMode, Engram, MemoryLike

T = TypeVar("T")


class EngramSync:
    """Same methods as Engram, blocking. Use as a context manager or call close()."""

    def __init__(
        self, settings: Settings | None = None, *, embedder: Embedder | None = None, tenant: str | None = None
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="engram-sync", daemon=True)
        self._thread.start()
        self.engram: Engram = self._run(Engram.open(settings, embedder=embedder, tenant=tenant))

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def remember(self, content: str | MemoryLike, **kwargs: Any) -> WriteResult:
        return self._run(self.engram.remember(content, **kwargs))

    def remember_many(
        self, items: Sequence[MemoryLike], *, tenant: str | None = None, actor: str = "library",
        embed: EmbedMode = "sync",
    ) -> list[WriteResult | EngramError]:  # fmt: skip
        return self._run(self.engram.remember_many(items, tenant=tenant, actor=actor, embed=embed))

    def get(self, memory_id: uuid.UUID | str, *, tenant: str | None = None) -> Memory:
        return self._run(self.engram.get(memory_id, tenant=tenant))

    def list(self, **kwargs: Any) -> MemoryPage:
        return self._run(self.engram.list(**kwargs))

    def update(
        self, memory_id: uuid.UUID | str, patch: MemoryPatch | Mapping[str, Any], *, expected_revision: int,
        tenant: str | None = None, actor: str = "library",
    ) -> Memory:  # fmt: skip
        return self._run(
            self.engram.update(memory_id, patch, expected_revision=expected_revision, tenant=tenant, actor=actor)
        )

    def archive(self, memory_id: uuid.UUID | str, **kwargs: Any) -> Memory:
        return self._run(self.engram.archive(memory_id, **kwargs))

    def delete(self, memory_id: uuid.UUID | str, **kwargs: Any) -> None:
        self._run(self.engram.delete(memory_id, **kwargs))

    def history(self, memory_id: uuid.UUID | str, **kwargs: Any) -> builtins.list[HistoryEntry]:
        return self._run(self.engram.history(memory_id, **kwargs))

    def unarchive(self, memory_id: uuid.UUID | str, **kwargs: Any) -> Memory:
        return self._run(self.engram.unarchive(memory_id, **kwargs))

    def recall(self, query: str | RecallRequest | Mapping[str, Any], **kwargs: Any) -> RecallResult:
        return self._run(self.engram.recall(query, **kwargs))

    def receipt(self, receipt_id: uuid.UUID | str, **kwargs: Any) -> Receipt:
        return self._run(self.engram.receipt(receipt_id, **kwargs))

    def relate(self, relation: RelationInput | Mapping[str, Any], **kwargs: Any) -> Relation:
        return self._run(self.engram.relate(relation, **kwargs))

    def create_key(self, spec: Mapping[str, Any] | None = None, **kwargs: Any) -> NewKey:
        return self._run(self.engram.create_key(spec, **kwargs))

    def list_keys(self, **kwargs: Any) -> builtins.list[ApiKey]:
        return self._run(self.engram.list_keys(**kwargs))

    def revoke_key(self, key_id: uuid.UUID | str, **kwargs: Any) -> ApiKey:
        return self._run(self.engram.revoke_key(key_id, **kwargs))

    def close(self) -> None:
        try:
            self._run(self.engram.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    def __enter__(self) -> EngramSync:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
