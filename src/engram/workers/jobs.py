"""The background jobs one process runs: inside ``engram serve`` (unless ``--no-jobs``) or in ``engram
worker`` processes, any number of them side by side (each job leases its work with SKIP LOCKED)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.config import Settings
from engram.outbox.dispatcher import Dispatcher
from engram.service.consolidation import consolidate_tenant
from engram.service.decay import decay_tenant, prune_receipts_tenant
from engram.workers.enrichment import EnrichmentWorker
from engram.workers.loop import Loop
from engram.workers.scheduler import Periodic, Scheduler

if TYPE_CHECKING:
    from engram.service.engram import Engram


def background_jobs(
    engram: Engram, *, enrichment_interval: float = 1.0, lease_seconds: float = 60.0, batch: int = 16
) -> list[Loop]:
    """Enrichment (vectors for memories written without one, index upkeep), the outbox, and the periodic
    jobs of every tenant (decay, consolidation, the receipts' retention)."""
    return [
        EnrichmentWorker(engram, interval=enrichment_interval),
        Dispatcher(engram, lease_seconds=lease_seconds, batch=batch),
        Scheduler(engram, periodic_jobs(engram.settings)),
    ]


def periodic_jobs(settings: Settings) -> dict[str, Periodic]:
    """The jobs every tenant gets, by name (a new one is a line here)."""
    return {
        "decay": Periodic(decay_tenant, settings.decay_interval),
        "consolidate": Periodic(consolidate_tenant, settings.consolidation_interval),
        "receipts": Periodic(prune_receipts_tenant, settings.receipt_retention_interval),
    }
