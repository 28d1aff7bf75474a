"""What recall needs to know about a tenant's corpus (``Corpus``), and the per-tenant cache that keeps it
(``Corpora``): read with a recall's first reads of a tenant, then served for ``STATS_TTL`` seconds and
read again in the background while the old statistics are still served."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, LiteralString

from engram.model.tenant import source_trust
from engram.store.database import Conn, Database
from engram.store.embeddings import own_index_names

_log = logging.getLogger(__name__)

STATS_TTL = 30.0  # seconds before a tenant's corpus statistics and speakers are read again

# The planner's statistics of the recall tables (CORPUS says when they were never gathered).
ANALYZE_RECALL_TABLES: LiteralString = "ANALYZE memories, memory_embeddings, search_postings"

# What recall needs to know about a tenant's corpus, in one statement: BM25F's document count and average
# length, the speakers (for query analysis), whether context vectors exist, the text search configuration,
# whether the tenant has a (valid) HNSW index of its own for the current model (``own_index_names``); and
# how many active memories are shared (no owner: ``retrieval.scope``); and whether the recall tables have
# never been analyzed (a new database).
CORPUS: LiteralString = """
SELECT s.n, s.avgdl,
       ARRAY(SELECT DISTINCT speaker FROM memories
              WHERE tenant_id = %(tenant_id)s AND speaker IS NOT NULL LIMIT 1000) AS speakers,
       EXISTS (SELECT 1 FROM memory_embeddings
                WHERE tenant_id = %(tenant_id)s AND context_embedding IS NOT NULL) AS has_context,
       coalesce((SELECT fts_config::text FROM tenants WHERE tenant_id = %(tenant_id)s), 'english') AS fts_config,
       (SELECT settings -> 'source_trust' FROM tenants WHERE tenant_id = %(tenant_id)s) AS source_trust,
       EXISTS (SELECT 1 FROM relations
                WHERE tenant_id = %(tenant_id)s AND type = 'contradicts') AS has_contradictions,
       EXISTS (SELECT 1 FROM pg_index i
                WHERE i.indexrelid IN (SELECT to_regclass(n) FROM unnest(%(own_indexes)s::text[]) n) AND i.indisvalid)
           AS own_index,
       (SELECT count(*) FROM memories
         WHERE tenant_id = %(tenant_id)s AND scope_owner IS NULL AND status = 'active') AS n_shared,
       (SELECT bool_or(c.reltuples < 0) FROM pg_class c
         WHERE c.oid IN ('memories'::regclass, 'memory_embeddings'::regclass, 'search_postings'::regclass))
           AS unanalyzed
  FROM (SELECT count(*) AS n, coalesce(avg(search_len), 1)::float8 AS avgdl
          FROM memories WHERE tenant_id = %(tenant_id)s AND status = 'active') s
"""


@dataclass(frozen=True)
class Corpus:
    """Per-tenant statistics recall needs, cached for STATS_TTL seconds."""

    n_docs: int
    avgdl: float
    speakers: list[str]
    fts_config: str
    has_context: bool
    own_index: bool  # an HNSW index of its own for the current model (large tenants)
    source_trust: dict[str, float]
    has_contradictions: bool  # any "contradicts" relation: only then are they read for the candidates
    n_shared: int = 0  # active memories every caller may see (``retrieval.scope``)


class Corpora:
    """Each tenant's ``Corpus``, cached; with the background work that keeps it (``drain`` waits for it)."""

    def __init__(self, db: Database, ttl: float = STATS_TTL) -> None:
        self.db = db
        self.ttl = ttl
        self._stats: dict[str, tuple[float, Corpus]] = {}
        self._refreshing: set[str] = set()
        self._analyzing = False
        self._background: set[asyncio.Task[None]] = set()

    def cached(self, tenant_id: str, model_id: str | None) -> Corpus | None:
        """The tenant's statistics from the cache (None the first time); once older than the TTL they are
        still served while a background task reads them again."""
        cached = self._stats.get(tenant_id)
        if cached is None:
            return None
        if cached[0] <= time.monotonic() and tenant_id not in self._refreshing:
            self._refreshing.add(tenant_id)
            self._spawn(self._refresh(tenant_id, model_id))
        return cached[1]

    async def get(self, conn: Conn, tenant_id: str, model_id: str | None) -> Corpus:
        """The tenant's statistics: cached, or read on ``conn`` (with the recall's own reads)."""
        corpus = self.cached(tenant_id, model_id)
        if corpus is None:
            corpus = await self.read(conn, tenant_id, model_id)
            self._stats[tenant_id] = (time.monotonic() + self.ttl, corpus)
        return corpus

    async def read(self, conn: Conn, tenant_id: str, model_id: str | None) -> Corpus:
        own = own_index_names(model_id, tenant_id) if model_id else []
        row = await (await conn.execute(CORPUS, {"tenant_id": tenant_id, "own_indexes": own}, binary=True)).fetchone()
        assert row is not None
        if row["unanalyzed"] and row["n"] > 0:
            self._analyze_soon()
        return Corpus(int(row["n"]), float(row["avgdl"]), list(row["speakers"]), row["fts_config"],
                      bool(row["has_context"]), bool(row["own_index"]), source_trust(row["source_trust"]),
                      bool(row["has_contradictions"]), int(row["n_shared"]))  # fmt: skip

    def forget(self, tenant_id: str) -> None:
        """Read the tenant's statistics again at its next recall (its settings changed)."""
        self._stats.pop(tenant_id, None)

    def note_context(self, tenant_id: str) -> None:
        """This tenant now has context vectors: read its statistics again (it was skipping dense_context)."""
        cached = self._stats.get(tenant_id)
        if cached and not cached[1].has_context:
            del self._stats[tenant_id]

    async def drain(self) -> None:
        """Finish the refreshes and the analysis still running."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _analyze_soon(self) -> None:
        if self._analyzing:  # once per process: without owner rights it can only warn, each time
            return
        self._analyzing = True
        self._spawn(self._analyze())

    async def _analyze(self) -> None:
        """A new database's recall tables, analyzed as soon as they hold memories instead of when autovacuum
        gets to them (about a minute; never below 50 rows): until then PostgreSQL plans them as if it knew
        nothing of them, and recalls are many times slower."""
        try:
            async with self.db.owner() as conn:
                await conn.execute(ANALYZE_RECALL_TABLES)
        except Exception as exc:  # autovacuum will do it later
            _log.warning("could not analyze the recall tables: %s", exc)

    async def _refresh(self, tenant_id: str, model_id: str | None) -> None:
        try:
            async with self.db.tenant(tenant_id) as conn:
                corpus = await self.read(conn, tenant_id, model_id)
            self._stats[tenant_id] = (time.monotonic() + self.ttl, corpus)
        except Exception as exc:  # the stale statistics stay in use; the next recall tries again
            _log.warning("could not refresh the corpus statistics of tenant %s: %s", tenant_id, exc)
        finally:
            self._refreshing.discard(tenant_id)
