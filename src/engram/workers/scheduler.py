"""Periodic jobs per tenant (decay, consolidation, receipts): every ``poll`` seconds the scheduler gives each tenant a
row per job, leases the due ones with SKIP LOCKED (so any number of processes may run schedulers: a tenant's
job runs in one of them at a time), runs each and records its outcome and next time. A job that fails is
tried again after its interval; a scheduler that dies loses its lease when it runs out. ``stop`` lets the run
under way finish and be recorded, hands back the leases it has not started, then stops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.errors import EngramError
from engram.store import schedule as store
from engram.workers.loop import Loop

if TYPE_CHECKING:
    from engram.service.engram import Engram

_log = logging.getLogger(__name__)
JobFn = Callable[["Engram", str], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Periodic:
    run: JobFn
    every: float  # seconds between the end of one run and the start of the next


class Scheduler(Loop):
    task_name = "engram-scheduler"

    def __init__(
        self, engram: Engram, jobs: Mapping[str, Periodic], *, poll: float = 30.0, lease_seconds: float = 600.0,
        batch: int = 4, worker_id: str | None = None,
    ) -> None:  # fmt: skip
        self.engram = engram
        self.jobs = dict(jobs)
        self.poll = poll
        self.lease_seconds = lease_seconds
        self.batch = batch
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.ran = 0
        self._stopping = asyncio.Event()

    async def run_once(self) -> int:
        """Lease the due runs (at most ``batch``), run them one after another, settle each; how many ran."""
        async with self.engram.db.queue() as conn:
            await store.ensure(conn, list(self.jobs))
            leased = await store.claim(conn, list(self.jobs), limit=self.batch, lease=self.lease_seconds,
                                       by=self.worker_id)  # fmt: skip
        for n, (tenant_id, job) in enumerate(leased):
            if self._stopping.is_set():  # another scheduler may run them now rather than when the lease runs out
                async with self.engram.db.queue() as conn:
                    await store.release(conn, leased[n:], by=self.worker_id)
                return n
            result: dict[str, Any] | None = None
            error: str | None = None
            try:
                result = await self.jobs[job].run(self.engram, tenant_id)
            except EngramError as exc:
                error = f"{type(exc).__name__}: {exc.message}"[:2000]
                _log.warning("scheduled %s of tenant %s failed: %s", job, tenant_id, error)
            except Exception as exc:  # a bug in one job must not stop the others
                error = f"{type(exc).__name__}: {exc}"[:2000]
                _log.exception("scheduled %s of tenant %s failed", job, tenant_id)
            async with self.engram.db.queue() as conn:
                await store.settle(conn, tenant_id, job, by=self.worker_id, every=self.jobs[job].every,
                                   result=result, error=error)  # fmt: skip
            self.ran += 1
        return len(leased)

    async def stop(self, grace: float = 30.0) -> None:
        """Wait up to ``grace`` seconds for the run under way to finish and be recorded, then cancel."""
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._task), grace)
        await super().stop()
        self._stopping.clear()  # it may be started again

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                while await self.run_once() == self.batch and not self._stopping.is_set():
                    pass  # more may be due
            except EngramError as exc:  # the database away: try again at the next poll
                _log.warning("scheduler: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.poll)
