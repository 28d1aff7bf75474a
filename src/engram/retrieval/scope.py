"""Where recall looks (SPEC 5.1): the caller's scope, its size, and the plan chosen from it.

What a caller acting as user U in workflow W may see lies within the tenant's shared memories and those
owned by U or W (``memories.scope_owner``, migration 0014). When that scope is small, recall scores every
row of it exactly, read through the scope indexes, instead of walking a tenant-wide HNSW graph and
postings that mostly hold other users' memories; when it is large, through the tenant's own HNSW index
or, for a tenant without one, the model's shared one. The plan and its reason go into the receipt.
"""

from __future__ import annotations

import time
from typing import LiteralString

from engram.model.recall import RecallPlan, RecallRequest
from engram.retrieval.corpus import Corpus
from engram.store.database import Conn

# Scopes up to this many memories are scored exactly: about 1-2 ms for the dense side at 2,000 rows, less
# than an HNSW scan that has to filter out other users' neighbours.
EXACT_LIMIT = 2000
# Owned rows are counted up to this cap: beyond it only "large" matters.
COUNT_CAP = 2 * EXACT_LIMIT
SCOPE_TTL = 30.0  # seconds a scope's size is reused (as the corpus statistics are)

_CAP: LiteralString = "4000"
assert int(_CAP) == COUNT_CAP
OWNED: LiteralString = (
    "SELECT count(*) AS n FROM (SELECT 1 FROM memories WHERE tenant_id = %(tenant_id)s"
    " AND scope_owner = ANY(%(owners)s) AND status = 'active' LIMIT " + _CAP + ") x"
)


def owners(req: RecallRequest) -> list[str]:
    """The owners whose memories the caller may see besides the shared ones (``memories.scope_owner``)."""
    found = []
    if req.user_id is not None:
        found.append(f"u:{req.user_id}")
    if req.workflow_id is not None:
        found.append(f"w:{req.workflow_id}")
    return found


def choose(corpus: Corpus, owned: int, exact_limit: int = EXACT_LIMIT) -> RecallPlan:
    """The plan for a scope of ``owned`` rows of its own beside the tenant's shared ones."""
    size = min(corpus.n_shared + owned, corpus.n_docs) if corpus.n_docs else corpus.n_shared + owned
    if size <= exact_limit:
        return RecallPlan(
            name="scope-exact", scope_size=size,
            reason=f"{size} memories in scope (at most {exact_limit} are scored exactly)",
        )  # fmt: skip
    if corpus.own_index:
        return RecallPlan(
            name="tenant-index", scope_size=size,
            reason=f"{size}+ memories in scope, over {exact_limit}: the tenant's own HNSW index",
        )  # fmt: skip
    return RecallPlan(
        name="shared-index", scope_size=size,
        reason=f"{size}+ memories in scope, over {exact_limit}, and the tenant has no index of its own yet",
    )  # fmt: skip


class Scopes:
    """How many memories each (tenant, owners) holds, counted up to ``COUNT_CAP`` and reused for
    ``SCOPE_TTL`` seconds: a user's recalls in a row plan from one count."""

    def __init__(self, ttl: float = SCOPE_TTL, size: int = 100_000, exact_limit: int = EXACT_LIMIT) -> None:
        self.ttl = ttl
        self.size = size
        self.exact_limit = exact_limit
        self._owned: dict[tuple[str, tuple[str, ...]], tuple[float, int]] = {}

    def cached(self, tenant_id: str, who: list[str]) -> int | None:
        if not who:
            return 0
        hit = self._owned.get((tenant_id, tuple(who)))
        if hit is None or hit[0] <= time.monotonic():
            return None
        return hit[1]

    async def count(self, conn: Conn, tenant_id: str, who: list[str]) -> int:
        """The owned rows of ``who`` (cached, or counted on ``conn``)."""
        n = self.cached(tenant_id, who)
        if n is not None:
            return n
        row = await (await conn.execute(OWNED, {"tenant_id": tenant_id, "owners": who})).fetchone()
        n = int(row["n"]) if row else 0
        if len(self._owned) >= self.size:  # a crude bound: the oldest half goes
            for key in list(self._owned)[: self.size // 2]:
                del self._owned[key]
        self._owned[(tenant_id, tuple(who))] = (time.monotonic() + self.ttl, n)
        return n

    def plan(self, corpus: Corpus, owned: int) -> RecallPlan:
        return choose(corpus, owned, self.exact_limit)

    def forget(self, tenant_id: str) -> None:
        for key in [k for k in self._owned if k[0] == tenant_id]:
            del self._owned[key]
