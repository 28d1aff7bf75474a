"""What the review UI's dashboard shows of one tenant, read from the database (not from metrics labels)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RecallStats(BaseModel):
    recalls: int = Field(description="Recalls in the window")
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    empty_rate: float | None = Field(description="Share of recalls that returned nothing (or abstained)")
    degraded_rate: float | None = Field(description="Share answered without part of retrieval")


class TenantStats(BaseModel):
    tenant_id: str
    counts: dict[str, dict[str, int]] = Field(description="Memories by kind, then status")
    total: int
    recall_24h: RecallStats
    queues: dict[str, int] = Field(description="This tenant's jobs waiting: embedding, outbox, outbox_dead")
