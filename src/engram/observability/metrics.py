"""Engram's Prometheus metrics, in a registry of its own (an application that embeds Engram keeps its own
metrics apart). No label carries a tenant, a user or a query: labels are routes, plans, retrievers and
outcomes, a few values each, so the series stay few whatever the traffic (per-tenant figures come from the
database, on the dashboard)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)

_LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "engram_http_requests", "HTTP requests answered, by route template and status", ["method", "route", "status"],
    registry=REGISTRY,
)  # fmt: skip
REQUEST_SECONDS = Histogram(
    "engram_http_request_duration_seconds", "Time to answer an HTTP request, by route template", ["method", "route"],
    buckets=_LATENCY, registry=REGISTRY,
)  # fmt: skip
WRITE_SECONDS = Histogram(
    "engram_write_duration_seconds", "Time to write a batch of memories (one item or many)", buckets=_LATENCY,
    registry=REGISTRY,
)  # fmt: skip
WRITES = Counter("engram_memories_written", "Memories written, by the status they got", ["status"], registry=REGISTRY)
RECALL_SECONDS = Histogram(
    "engram_recall_duration_seconds", "Time to recall, by the plan that read the candidates", ["plan"],
    buckets=_LATENCY, registry=REGISTRY,
)  # fmt: skip
RECALL_CANDIDATES = Histogram(
    "engram_recall_candidates", "Candidates each retriever contributed to one recall", ["retriever"],
    buckets=(0, 1, 5, 10, 25, 50, 100, 200, 500), registry=REGISTRY,
)  # fmt: skip
RECALL_DEGRADED = Counter(
    "engram_recall_degraded", "Recalls answered without part of their retrieval (the embedder down or late)",
    registry=REGISTRY,
)  # fmt: skip
RECALL_EMPTY = Counter(
    "engram_recall_empty", "Recalls that returned no item, by why", ["reason"], registry=REGISTRY
)  # fmt: skip
EMBED_SECONDS = Histogram(
    "engram_embedding_duration_seconds", "Time to embed one call's texts (batched), by model", ["model"],
    buckets=_LATENCY, registry=REGISTRY,
)  # fmt: skip
EMBED_FAILURES = Counter("engram_embedding_failures", "Embedding calls that failed or timed out", ["model"],
                         registry=REGISTRY)  # fmt: skip
QUEUE_DEPTH = Gauge("engram_queue_depth", "Jobs waiting in a background queue", ["queue"], registry=REGISTRY)
QUEUE_AGE = Gauge(
    "engram_queue_oldest_age_seconds", "Age of the oldest job a queue holds (0 when empty)", ["queue"],
    registry=REGISTRY,
)  # fmt: skip


def observe_recall(
    seconds: float, plan: str | None, lists: Mapping[str, Sequence[object]], degraded: bool, empty: str | None
) -> None:
    RECALL_SECONDS.labels(plan or "none").observe(seconds)
    for retriever, hits in lists.items():
        RECALL_CANDIDATES.labels(retriever).observe(len(hits))
    if degraded:
        RECALL_DEGRADED.inc()
    if empty is not None:
        RECALL_EMPTY.labels(empty).inc()


def observe_queues(stats: Mapping[str, Mapping[str, float]]) -> None:
    """Set the queue gauges from ``Engram.queue_stats()`` (read when /metrics is scraped)."""
    for queue, values in stats.items():
        QUEUE_DEPTH.labels(queue).set(values["depth"])
        QUEUE_AGE.labels(queue).set(values["oldest_age_seconds"])


def exposition() -> bytes:
    return generate_latest(REGISTRY)
