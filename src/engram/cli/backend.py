"""Where a CLI command's memory operations go: to a running server through `engram.client` when one is
reachable, else to an `Engram` opened in this process.

A server is used when ``ENGRAM_API_KEY`` is set (at ``ENGRAM_URL``, else the configured host and port; the
tenant then comes from the key), or when the data directory's own `engram serve` is running
(``engram.discovery``; the tenant is the ``--tenant`` given). Only then is the command quick: nothing is
loaded but an HTTP client. ``ENGRAM_CLI_LOCAL=1`` always works in process."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from engram import discovery
from engram.config import Settings
from engram.errors import EngramError, ValidationError

if TYPE_CHECKING:
    from engram.model import Memory, WriteResult
    from engram.model.memory import MemoryPage
    from engram.model.recall import RecallResult
    from engram.model.wire import WriteResponse
    from engram.service import Engram


class Backend(Protocol):
    """The operations the quick commands need, the same whichever way they travel."""

    where: str

    async def remember_many(
        self, items: Sequence[dict[str, Any]]
    ) -> Sequence[WriteResult | WriteResponse | EngramError]: ...

    async def get(self, memory_id: str, *, reveal: bool) -> Memory: ...

    async def list(self, *, limit: int, cursor: str | None, reveal: bool, filters: dict[str, Any]) -> MemoryPage: ...

    async def recall(self, request: dict[str, Any]) -> RecallResult: ...


class Local:
    """In process: the caller is trusted as an admin of the tenant it names, as the library trusts it."""

    def __init__(self, engram: Engram, tenant: str) -> None:
        self.engram, self.tenant = engram, tenant
        self.where = "in process"

    async def remember_many(
        self, items: Sequence[dict[str, Any]]
    ) -> Sequence[WriteResult | WriteResponse | EngramError]:
        return await self.engram.remember_many(items, tenant=self.tenant, actor="cli")

    async def get(self, memory_id: str, *, reveal: bool) -> Memory:
        return await self.engram.get(memory_id, tenant=self.tenant, reveal=reveal)

    async def list(self, *, limit: int, cursor: str | None, reveal: bool, filters: dict[str, Any]) -> MemoryPage:
        tags = filters.pop("tags", None) or ()
        return await self.engram.list(
            tenant=self.tenant, limit=limit, cursor=cursor, tags=tags, reveal=reveal, **filters
        )

    async def recall(self, request: dict[str, Any]) -> RecallResult:
        return await self.engram.recall(request, tenant=self.tenant, actor="cli")


def server_for(settings: Settings, tenant: str | None) -> tuple[str, str, dict[str, str]] | None:
    """(url, credential, extra headers) of the server this command should use, or None to work in process."""
    if os.environ.get("ENGRAM_CLI_LOCAL", "").lower() in ("1", "true", "yes"):
        return None
    key = os.environ.get("ENGRAM_API_KEY")
    if key:
        url = os.environ.get("ENGRAM_URL") or f"http://{settings.host}:{settings.port}"
        # The key names the tenant; a --tenant given too must be the same (the server checks it).
        return url, key, {discovery.TENANT_HEADER: tenant} if tenant else {}
    found = discovery.read(settings.data_dir)
    if found is None:
        return None
    if tenant is None:
        raise ValidationError("--tenant is required (or set ENGRAM_API_KEY: the key names its tenant)", field="tenant")
    return found.url, found.token, {discovery.TENANT_HEADER: tenant}


@asynccontextmanager
async def backend(
    settings: Settings, tenant: str | None, *, embedding: bool = True, create: bool = False
) -> AsyncIterator[Backend]:
    """The backend a command should use (see the module's docstring)."""
    server = server_for(settings, tenant)
    if server is not None:
        from engram.cli.remote import Remote

        async with Remote.connect(*server) as remote:
            yield remote
        return
    if tenant is None:
        raise ValidationError("--tenant is required when no server is running", field="tenant")
    from engram.service import Engram

    async with await Engram.open(settings, embedding=embedding, create=create) as engram:
        yield Local(engram, tenant)
