"""The HTTP server for `engram serve`."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

import uvicorn


class Server(uvicorn.Server):
    """uvicorn's server, minus one habit: after a graceful shutdown it re-raises SIGINT/SIGTERM, which
    would kill the process before Engram.close() stops the PostgreSQL it started."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        def stop(sig: int, frame: FrameType | None) -> None:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True  # a second Ctrl-C skips waiting for open connections
            self.should_exit = True

        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
