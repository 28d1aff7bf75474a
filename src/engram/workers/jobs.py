"""The background jobs one process runs: inside ``engram serve`` (unless ``--no-jobs``) or in ``engram
worker`` processes, any number of them side by side (each job leases its work with SKIP LOCKED)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from engram.outbox.dispatcher import Dispatcher
from engram.workers.enrichment import EnrichmentWorker

if TYPE_CHECKING:
    from engram.service.engram import Engram


class Job(Protocol):
    def start(self) -> None: ...

    async def stop(self) -> None: ...


def background_jobs(
    engram: Engram, *, enrichment_interval: float = 1.0, lease_seconds: float = 60.0, batch: int = 16
) -> list[Job]:
    """Enrichment (vectors for memories written without one, index upkeep) and the outbox."""
    return [
        EnrichmentWorker(engram, interval=enrichment_interval),
        Dispatcher(engram, lease_seconds=lease_seconds, batch=batch),
    ]
