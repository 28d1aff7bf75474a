"""`engram worker`: the background jobs (enrichment, the outbox) in a process of their own, beside `engram
serve --no-jobs` or several of its kind: each job leases its work, so no two workers do the same."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from engram.cli.common import DataDir, err, ready, run, settings_for
from engram.config import Settings


def worker(
    data_dir: DataDir = None,
    lease_seconds: Annotated[
        float, typer.Option(min=1.0, help="How long a leased action is this worker's before another may retry it.")
    ] = 60.0,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Actions leased and carried out at a time.")] = 16,
) -> None:
    """Run the background jobs until SIGINT or SIGTERM, on the same database options as `serve`."""
    settings = settings_for(data_dir)
    run(_work(settings, lease_seconds, batch))


async def _work(settings: Settings, lease_seconds: float, batch: int) -> None:

    from engram.observability import tracing
    from engram.observability.logs import setup
    from engram.service import Engram
    from engram.workers.jobs import background_jobs

    setup(settings.log_level, settings.log_format, settings.access_log)
    tracing.configure(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with await Engram.open(settings) as engram:
        await ready(engram)  # models loaded before the first action, not while its lease runs
        jobs = background_jobs(
            engram, enrichment_interval=settings.enrichment_interval, lease_seconds=lease_seconds, batch=batch
        )
        for job in jobs:
            job.start()
        err.print("Engram worker running (enrichment, outbox); stop with Ctrl-C.", highlight=False)
        try:
            await stop.wait()
        finally:
            for job in jobs:
                await job.stop()
