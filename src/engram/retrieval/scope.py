"""Where recall looks (SPEC 5.1): the caller's scope, its size, and the plan chosen from it.

What a caller acting as user U in workflow W may see lies within the tenant's shared memories and those
owned by U or W (``memories.scope_owner``, migration 0014). When that scope is small, recall scores every
row of it exactly, read through the scope indexes, instead of walking a tenant-wide HNSW graph and
postings that mostly hold other users' memories; when it is large, through the tenant's own HNSW index
or a large owner's own index, or, for a scope no such index serves, the model's shared one. The plan and
its reason go into the receipt.
"""

from __future__ import annotations

import math
import time
from typing import LiteralString, NamedTuple

from engram.model.recall import RecallPlan, RecallRequest
from engram.retrieval.corpus import Corpus
from engram.store.database import Conn
from engram.store.scope_indexes import SCOPE_INDEX_THRESHOLD, owner_index_name

# Scopes up to this many memories are scored exactly: about 1-2 ms for the dense side at 2,000 rows, less
# than an HNSW scan that has to filter out other users' neighbours.
EXACT_LIMIT = SCOPE_INDEX_THRESHOLD
# Owned rows are counted up to this cap: beyond it only "large" matters.
COUNT_CAP = 2 * EXACT_LIMIT
EXACT_ALWAYS = 500  # scopes this small are always scored exactly (at most about 1 ms)
GRAPH_SHARE = 4  # a scope of at least 1/GRAPH_SHARE of a tenant with its own graph is read through it
SCOPE_TTL = 30.0  # seconds a scope's size is reused (as the corpus statistics are)
# A whole graph's walk keeps this many times the rows it returns in its list: a margin for the
# accuracy of its first ranks, the walk's cost growing with the list (measured in docs/retrieval.md).
WHOLE_WALK = 1.28
# ... and returns this share of the candidates, at least twice the items asked for, as an exact scan of a
# small scope does: fusion scores a candidate by its cosines whichever retriever found it (lexical rows
# carry them too), so the further dense rows count only where nothing else found them, while each costs a
# memory lookup and its Python work (and a walk, more of its graph; docs/retrieval.md).
WALK_ROWS = 0.5

_CAP: LiteralString = "4000"
assert int(_CAP) == COUNT_CAP
# Each owner's active memories (up to the cap), and whether it has a valid index of its own.
OWNED: LiteralString = (
    """
SELECT u.owner,
       (SELECT count(*) FROM (SELECT 1 FROM memories WHERE tenant_id = %(tenant_id)s AND scope_owner = u.owner
                                AND status = 'active' LIMIT """
    + _CAP
    + """) x) AS n,
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indexrelid = to_regclass(u.index) AND i.indisvalid) AS indexed
  FROM unnest(%(owners)s::text[], %(indexes)s::text[]) AS u(owner, index)
"""
)


class Owned(NamedTuple):
    """One owner's part of a scope."""

    owner: str
    n: int  # its active memories, up to COUNT_CAP
    indexed: bool  # it has an HNSW index of its own (``store.scope_indexes``)


def owners(req: RecallRequest) -> list[str]:
    """The owners whose memories the caller may see besides the shared ones (``memories.scope_owner``)."""
    found = []
    if req.user_id is not None:
        found.append(f"u:{req.user_id}")
    if req.workflow_id is not None:
        found.append(f"w:{req.workflow_id}")
    return found


def choose(corpus: Corpus, owned: list[Owned], exact_limit: int = EXACT_LIMIT) -> RecallPlan:
    """The plan for a scope made of the tenant's shared memories and ``owned``."""
    size = corpus.n_shared + sum(o.n for o in owned)
    if corpus.n_docs:
        size = min(size, corpus.n_docs)
    # Past a few hundred rows a scope that is a large share of a tenant with its own graph is read faster
    # through that graph (most of what it visits is in scope) than row by row: 6-15 ms for 1,700 rows of a
    # 4,000-memory tenant whose vectors are stored out of line, against 2-4 ms.
    graph_serves = corpus.own_index and size > EXACT_ALWAYS and size * GRAPH_SHARE >= corpus.n_docs
    if size <= exact_limit and not graph_serves:
        return RecallPlan(
            name="scope-exact", scope_size=size,
            reason=f"{size} memories in scope (at most {exact_limit} are scored exactly)",
        )  # fmt: skip
    large = [o for o in owned if o.n > exact_limit]
    if len(large) == 1 and large[0].indexed and size - large[0].n <= exact_limit:
        return RecallPlan(
            name="owner-index", scope_size=size, index_owner=large[0].owner,
            reason=f"{size}+ memories in scope, over {exact_limit}, {large[0].n}+ of them of one owner with an "
            f"index of its own; the other {size - large[0].n} scored exactly",
        )  # fmt: skip
    if corpus.own_index:
        return RecallPlan(
            name="tenant-index", scope_size=size,
            reason=f"{size}+ memories in scope, over {exact_limit}: the tenant's own HNSW index",
        )  # fmt: skip
    return RecallPlan(
        name="shared-index", scope_size=size,
        reason=f"{size}+ memories in scope, over {exact_limit}, and no index of the tenant or owner serves it",
    )  # fmt: skip


def fills_graph(plan: RecallPlan, corpus: Corpus) -> bool:
    """Whether the plan walks a graph every vector of which is in scope (an owner's, or the tenant's for a
    scope of the whole tenant): the walk drops nothing it visits."""
    if plan.name == "owner-index":
        return True
    return plan.name == "tenant-index" and bool(corpus.n_docs) and (plan.scope_size or 0) >= corpus.n_docs


def walk_rows(plan: RecallPlan, corpus: Corpus, candidates: int, max_items: int) -> int:
    """The dense rows a plan reads: ``candidates``, but an exact scan of the scope, or a walk of a graph the
    scope fills, returns ``WALK_ROWS`` of them (at least twice ``max_items``): its best rows are exactly
    (or, for the walk, nearly) the scope's nearest, which a filtered walk's are not."""
    if not (plan.name == "scope-exact" or fills_graph(plan, corpus)):
        return candidates
    return min(candidates, max(math.ceil(WALK_ROWS * candidates), 2 * max_items))


def with_walk_rows(plan: RecallPlan, corpus: Corpus, candidates: int, max_items: int) -> RecallPlan:
    """``plan``, saying so (``dense_rows``, and its reason) when it returns fewer dense rows than ``candidates``."""
    rows = walk_rows(plan, corpus, candidates, max_items)
    if rows >= candidates:
        return plan
    what = "the exact scan" if plan.name == "scope-exact" else "the walk of a graph the scope fills"
    return plan.model_copy(update={
        "dense_rows": rows, "reason": f"{plan.reason}; {what} returns its best {rows} of the {candidates} candidates",
    })  # fmt: skip


def ef_search(plan: RecallPlan, corpus: Corpus, most: int, rows: int) -> int:
    """The HNSW candidate list for a plan that walks a graph for ``rows`` rows, at most ``most``
    (``RetrievalConfig.ef_search``). A graph the scope fills (``fills_graph``) drops nothing it visits: the
    list need only exceed ``rows`` by a margin for accuracy (``WHOLE_WALK``). Otherwise enough for about
    twice ``rows`` of the vectors it visits to be in scope: the filtered part of the walk goes on past it
    anyway (iterative scans); what it buys is the accuracy of the first ranks, and its cost grows with it:
    9 ms at 300 against 3 ms at 100 on a 12,000-vector graph. The model's shared graph is mostly other
    tenants', so it keeps ``most``."""
    if fills_graph(plan, corpus):
        return min(most, math.ceil(WHOLE_WALK * rows))
    if plan.name != "tenant-index" or not corpus.n_docs:
        return most
    share = (plan.scope_size or 0) / corpus.n_docs  # below 1: a scope of the whole tenant fills its graph
    return min(most, math.ceil(2 * rows / max(share, 1e-6)))


class Scopes:
    """Each owner's part of a scope (``Owned``), counted up to ``COUNT_CAP`` and reused for ``SCOPE_TTL``
    seconds: a user's recalls in a row plan from one count."""

    def __init__(self, ttl: float = SCOPE_TTL, size: int = 100_000, exact_limit: int = EXACT_LIMIT) -> None:
        self.ttl = ttl
        self.size = size
        self.exact_limit = exact_limit
        self._owned: dict[tuple[str, str], tuple[float, Owned]] = {}

    def cached(self, tenant_id: str, who: list[str]) -> list[Owned] | None:
        found = []
        now = time.monotonic()
        for owner in who:
            hit = self._owned.get((tenant_id, owner))
            if hit is None or hit[0] <= now:
                return None
            found.append(hit[1])
        return found

    async def count(self, conn: Conn, tenant_id: str, who: list[str], model_id: str | None) -> list[Owned]:
        """The parts of ``who`` (cached, or counted on ``conn``)."""
        found = self.cached(tenant_id, who)
        if found is not None:
            return found
        indexes = [owner_index_name(model_id, tenant_id, o) if model_id else "" for o in who]
        rows = await (await conn.execute(OWNED, {"tenant_id": tenant_id, "owners": who, "indexes": indexes})).fetchall()
        found = [Owned(r["owner"], int(r["n"]), bool(r["indexed"])) for r in rows]
        if len(self._owned) >= self.size:  # a crude bound: the oldest half goes
            for key in list(self._owned)[: self.size // 2]:
                del self._owned[key]
        expires = time.monotonic() + self.ttl
        for part in found:
            self._owned[(tenant_id, part.owner)] = (expires, part)
        return found

    def plan(self, corpus: Corpus, owned: list[Owned], candidates: int, max_items: int) -> RecallPlan:
        return with_walk_rows(choose(corpus, owned, self.exact_limit), corpus, candidates, max_items)

    def forget(self, tenant_id: str) -> None:
        for key in [k for k in self._owned if k[0] == tenant_id]:
            del self._owned[key]
