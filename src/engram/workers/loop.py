"""What every background job shares: its loop runs as one task, from ``start`` until ``stop`` cancels it."""

from __future__ import annotations

import asyncio
import contextlib


class Loop:
    task_name = "engram-job"
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=self.task_name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        raise NotImplementedError
