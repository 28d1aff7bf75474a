"""Usage counts of recalled memories (``last_used_at``, ``use_count``), off the hot path: gathered in memory
and written about once a second for every tenant at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import Counter
from collections.abc import Mapping
from typing import LiteralString

from engram.retrieval.receipts import ASYNC_COMMIT
from engram.store.database import Database

_log = logging.getLogger(__name__)

TOUCH_INTERVAL = 1.0  # seconds between writes of usage counts

# Usage counts of one tenant's memories, in one statement; rows locked by a writer are skipped (never waited
# for, so never a deadlock): a usage count is a hint.
TOUCH: LiteralString = """
UPDATE memories m SET last_used_at = now(), use_count = m.use_count + u.n
  FROM (SELECT x.id, t.n FROM unnest(%(ids)s::uuid[], %(counts)s::integer[]) AS t(id, n)
          JOIN memories x ON x.tenant_id = %(tenant_id)s AND x.id = t.id
           FOR UPDATE OF x SKIP LOCKED) u
 WHERE m.tenant_id = %(tenant_id)s AND m.id = u.id
"""


async def touch(db: Database, counts: Mapping[str, Mapping[uuid.UUID, int]]) -> None:
    """Add to the usage counts of memories of any tenants (each under its own row-level security), in one
    pipelined transaction committed asynchronously."""
    async with db.tenants() as switch:
        await switch.conn.execute(ASYNC_COMMIT)
        for tenant_id, used in counts.items():
            conn = await switch(tenant_id)
            ids = sorted(used)  # a stable order: concurrent flushes lock rows alike
            await conn.execute(TOUCH, {"tenant_id": tenant_id, "ids": ids, "counts": [used[i] for i in ids]})


class Usage:
    """The memories recalls placed in their packets, counted until the next write."""

    def __init__(self, db: Database, interval: float = TOUCH_INTERVAL) -> None:
        self.db = db
        self.interval = interval
        self._pending: dict[str, Counter[uuid.UUID]] = {}
        self._flusher: asyncio.Task[None] | None = None

    def touch(self, tenant_id: str, ids: list[uuid.UUID]) -> None:
        """Count these memories as used now; written within ``interval`` seconds."""
        if not ids:
            return
        self._pending.setdefault(tenant_id, Counter()).update(ids)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.interval)
        await self.flush()

    async def flush(self) -> None:
        """Write what is counted, for every tenant in one round trip."""
        pending, self._pending = self._pending, {}
        if not pending:
            return
        try:
            await touch(self.db, pending)
        except Exception as exc:  # usage counts must never fail anything
            _log.warning("could not record the use of %d memories: %s", sum(map(len, pending.values())), exc)

    async def drain(self) -> None:
        """Write what is counted now, instead of at the next interval (on shutdown, and in tests)."""
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        await self.flush()
