"""The background jobs one process runs: inside ``engram serve`` (unless ``--no-jobs``) or in ``engram
worker`` processes, any number of them side by side (each job leases its work with SKIP LOCKED)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.outbox.dispatcher import Dispatcher
from engram.workers.enrichment import EnrichmentWorker
from engram.workers.loop import Loop

if TYPE_CHECKING:
    from engram.service.engram import Engram


def background_jobs(
    engram: Engram, *, enrichment_interval: float = 1.0, lease_seconds: float = 60.0, batch: int = 16
) -> list[Loop]:
    """Enrichment (vectors for memories written without one, index upkeep) and the outbox."""
    return [
        EnrichmentWorker(engram, interval=enrichment_interval),
        Dispatcher(engram, lease_seconds=lease_seconds, batch=batch),
    ]
