"""What a reviewer looks at besides memories and receipts: a memory's relations and the tenant's figures."""

from __future__ import annotations

import builtins
import uuid

from engram.model.access import Action, Principal
from engram.model.recall import Relation
from engram.model.review import RecallStats, TenantStats
from engram.service.reads import Reads
from engram.store import review


class Review(Reads):
    async def relations_of(
        self, memory_id: uuid.UUID | str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> builtins.list[Relation]:
        """The edges from and to a memory the caller may see (both ends are in its tenant)."""
        who = self._who(tenant, principal)
        mem = await self.get(memory_id, principal=who)
        async with self.db.tenant(who.tenant_id) as conn:
            return await review.relations_of(conn, who.tenant_id, mem.id)

    async def tenant_stats(self, *, tenant: str | None = None, principal: Principal | None = None) -> TenantStats:
        """Counts by kind and status, the last 24 hours of recalls (latency, empty and degraded shares) and the
        tenant's queues: from the database, for the review UI's dashboard (a reviewer's)."""
        who = self._who(tenant, principal)
        who.require(Action.SEE_ALL)
        async with self.db.tenant(who.tenant_id) as conn:
            counts = await review.counts(conn, who.tenant_id)
            recalls = await review.recalls(conn, who.tenant_id)
            queues = await review.queues(conn, who.tenant_id)
        n = int(recalls.get("n") or 0)

        def share(name: str) -> float | None:
            value = recalls.get(name)
            return float(value) if n and value is not None else None

        return TenantStats(
            tenant_id=who.tenant_id,
            counts=counts,
            total=sum(n for by_status in counts.values() for n in by_status.values()),
            recall_24h=RecallStats(
                recalls=n,
                latency_p50_ms=share("p50"),
                latency_p95_ms=share("p95"),
                empty_rate=share("empty"),
                degraded_rate=share("degraded"),
            ),
            queues=queues,
        )
