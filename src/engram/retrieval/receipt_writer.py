"""Receipts written behind the answer (SPEC 5.6).

A recall's receipt is queued when the recall answers and written moments later, with the receipts of other
recalls (of any tenants), in one statement: the caller does not wait for it.
What this process reads back (``settle``) it always sees; another process sees a receipt within
``LINGER`` seconds plus a write. Receipts still queued are written on ``close``; a crash of this process
loses those of the last moments, as an asynchronous commit may (recalls commit asynchronously anyway).
``inline`` mode writes each receipt before its recall answers instead.

The queue is bounded: when the database falls behind by ``BACKLOG`` receipts, recalls wait for it. While it
is unavailable receipts stay queued and are tried again every ``RETRY_DELAY`` seconds. A receipt the
database refuses (a data error) is logged with its id and dropped, never the batch it travelled in.
Anything that deletes receipts (a subject's erasure) must ``settle`` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from engram.errors import StoreUnavailable
from engram.retrieval.receipts import ReceiptRow, insert
from engram.store.database import Database

_log = logging.getLogger(__name__)

LINGER = 0.02  # seconds a receipt waits for others to share its write
BACKLOG = 2000  # queued receipts at which recalls start waiting for the database
RETRY_DELAY = 1.0  # seconds between attempts while the database is unavailable


class ReceiptWriter:
    def __init__(self, db: Database, *, inline: bool = False, linger: float = LINGER, backlog: int = BACKLOG) -> None:
        self.db = db
        self.inline = inline
        self.linger = linger
        self.backlog = backlog
        self.dropped = 0  # receipts the database refused
        self._queue: list[ReceiptRow] = []
        self._added = 0  # receipts queued since the start
        self._handled = 0  # of those, written or dropped (in queue order)
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._retry_at = 0.0

    @property
    def queued(self) -> int:
        return self._added - self._handled

    async def store(self, row: ReceiptRow) -> None:
        """Store a recall's receipt: now when inline, else queued."""
        if self.inline:
            await self._insert([row])
            return
        self._queue.append(row)
        self._added += 1
        self._start()
        if len(self._queue) >= self.backlog:  # the database is not keeping up: wait for it
            await self.settle()

    async def settle(self) -> None:
        """Return once every receipt queued before the call is written (or refused). Raises StoreUnavailable
        when the database cannot take them now (they stay queued)."""
        if self._handled >= self._added:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((self._added, waiter))
        self._wake.set()
        self._start()
        await waiter

    async def close(self) -> None:
        """Write what is queued (errors logged: nothing more can be done) and stop."""
        try:
            await self.settle()
        except StoreUnavailable as exc:
            _log.error("%d recall receipts could not be written: %s", self.queued, exc)
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while self._queue:
            if not self._wake.is_set():
                delay = max(self.linger, self._retry_at - time.monotonic())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
            self._wake.clear()
            batch, self._queue = self._queue, []
            try:
                await self._write(batch)
            except StoreUnavailable as exc:
                self._queue[:0] = batch  # kept, in order, for the next attempt
                self._retry_at = time.monotonic() + RETRY_DELAY
                _log.warning("%d recall receipts wait for the database: %s", len(self._queue), exc)
                self._release(exc)
                continue
            self._handled += len(batch)
            self._release(None)

    def _release(self, error: StoreUnavailable | None) -> None:
        waiting = []
        for target, waiter in self._waiters:
            if waiter.done():
                continue
            if self._handled >= target:
                waiter.set_result(None)
            elif error is not None:
                waiter.set_exception(error)
            else:
                waiting.append((target, waiter))
        self._waiters = waiting

    async def _write(self, batch: Sequence[ReceiptRow]) -> None:
        try:
            await self._insert(batch)
        except StoreUnavailable:
            raise
        except Exception:  # one receipt the database refuses must not cost the others theirs
            for row in batch:
                try:
                    await self._insert([row])
                except StoreUnavailable:
                    raise  # those already written are left as they are when tried again
                except Exception as exc:
                    self.dropped += 1
                    _log.error("recall receipt %s (tenant %s) was refused and dropped: %s", row.id, row.tenant_id, exc)

    async def _insert(self, rows: Sequence[ReceiptRow]) -> None:
        await insert(self.db, rows)
