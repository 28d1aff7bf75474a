"""Recall's first stage: the reads, and when each is made. Nothing is ranked here.

The dense side (the query's vector, its candidates) runs on a connection of its own beside the lexical
side (lexical and identifier candidates, whether the query's names are known), whose statements travel in
one round trip; with the tenant's statistics cached the dense side starts before anything else. A local
embedder (``EmbeddingGateway.local``) embeds the query before the reads; one elsewhere embeds while the
lexical side reads, and rows read before the query vector was known get their cosines in the dense side's
round trip if they are there in time, or afterwards. Without a query vector (no embedder, or it failed)
recall degrades to lexical, never to nothing. What ranking needs beyond the candidates is read after them
(``Later``), only when the configuration or the tenant asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from engram.errors import ProviderError
from engram.model.recall import RecallPlan, RecallRequest
from engram.retrieval import scope
from engram.retrieval.config import RetrievalConfig
from engram.retrieval.corpus import Corpora, Corpus
from engram.retrieval.filter import build_filter
from engram.retrieval.query import QueryAnalysis, analyse
from engram.retrieval.rank import Evidence
from engram.retrieval.retrievers import dense, followups, identifiers, lexical
from engram.retrieval.retrievers.base import Cosines, Hit, Relation, Row, Search
from engram.retrieval.scope import Scopes
from engram.store.database import Conn, Database

if TYPE_CHECKING:
    from engram.providers.base import Vector
    from engram.providers.gateway import EmbeddingGateway

_log = logging.getLogger(__name__)


def recall_settings(cfg: RetrievalConfig, ef_search: int | None = None) -> dict[str, str]:
    """Settings for a recall's reads: HNSW iterative scans (filtered queries keep their recall), and generic
    plans, so each statement is planned once per connection: left to the defaults, one whose generic plan
    looks dearer than its custom ones (a small scope's lexical statement) is planned again on every
    execution, at more than its execution costs (docs/retrieval.md). Their generic plans are their custom
    ones: literals decide the indexes, and no estimate can make a statement quadratic (``retrievers.lexical``)."""
    return {
        "hnsw.iterative_scan": "relaxed_order",
        "hnsw.ef_search": str(ef_search or cfg.ef_search),
        "max_parallel_workers_per_gather": "0",  # a worker costs more to start than these queries take
        "plan_cache_mode": "force_generic_plan",
    }


@dataclass(frozen=True, slots=True)
class Gathered:
    """What one recall read: ranking's ``evidence``, and what its receipt says of the query and corpus."""

    evidence: Evidence
    corpus: Corpus
    analysis: QueryAnalysis
    degraded_reason: str | None  # why recall ran lexically although it should not have
    plan: RecallPlan  # where the candidates were read (``retrieval.scope``)


class QueryVectors:
    """The query vectors embedded last, least recently used dropped first. Keyed by tenant too: a hit must
    not tell one tenant what another asked (by its speed)."""

    def __init__(self, size: int = 2048) -> None:
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], Vector] = OrderedDict()

    def peek(self, tenant_id: str, text: str) -> Vector | None:
        return self._vectors.get((tenant_id, text))

    async def embed(self, gateway: EmbeddingGateway, tenant_id: str, text: str) -> Vector:
        key = (tenant_id, text)
        hit = self._vectors.get(key)
        if hit is not None:
            self._vectors.move_to_end(key)
            return hit
        vector = (await gateway.embed([text]))[0]
        self._vectors[key] = vector
        if len(self._vectors) > self.size:
            self._vectors.popitem(last=False)
        return vector

    def forget(self, tenant_id: str) -> int:
        """Drop the tenant's cached query vectors (their keys are query texts); returns how many."""
        mine = [k for k in self._vectors if k[0] == tenant_id]
        for key in mine:
            del self._vectors[key]
        return len(mine)

    def clear(self) -> None:
        self._vectors.clear()


class _DenseSide(NamedTuple):
    vector: Vector | None
    degraded_reason: str | None
    lists: dict[str, list[Hit]]
    late: dict[uuid.UUID, Cosines]  # cosines of the rows the lexical side handed over (``_Unscored``)


class Gatherer:
    def __init__(self, db: Database, corpora: Corpora, vectors: QueryVectors, scopes: Scopes) -> None:
        self.db = db
        self.corpora = corpora
        self.vectors = vectors
        self.scopes = scopes

    async def gather(
        self,
        tenant_id: str,
        req: RecallRequest,
        cfg: RetrievalConfig,
        gateway: EmbeddingGateway | None,
        given: Vector | None,
        later: Later,
    ) -> Gathered:
        """Everything recall reads for ``req`` (but the long contents of what it places, ``answer``)."""
        model = gateway.model_id if gateway else None
        base = Search(build_filter(tenant_id, req), cfg, text=req.query, model_id=model)
        who: list[str] = base.where.params["owners"]
        unscored = _Unscored()

        found = _DenseSide(None, None, {}, {})  # until the dense side ends (or the embedder failed first)

        async def begin_dense(
            corpus: Corpus, analysis: QueryAnalysis, plan: RecallPlan
        ) -> asyncio.Task[_DenseSide] | None:
            nonlocal given, found
            if not cfg.dense:
                return None
            if given is None and gateway is not None and gateway.local:
                # An embedder on this machine's cores embeds before the reads start, not beside them: they
                # would share the cores, and both would take longer than one after the other
                # (docs/retrieval.md). One elsewhere (an API) embeds while the lexical side reads.
                given, failed = await self._query_vector(tenant_id, cfg, analysis, None, gateway)
                if given is None:
                    found = _DenseSide(None, failed, {}, {})
                    return None
            return asyncio.create_task(self._dense_side(base, analysis, given, corpus, plan, unscored, gateway))

        # With the tenant's statistics and the scope's size cached, the dense side starts before anything else.
        corpus = self.corpora.cached(tenant_id, model)
        owned = self.scopes.cached(tenant_id, who)
        analysis = _analyse(req, corpus, cfg) if corpus else None
        plan = self.scopes.plan(corpus, owned, cfg.candidates, req.max_items) if corpus and owned is not None else None
        side = await begin_dense(corpus, analysis, plan) if corpus and analysis and plan else None
        lists: dict[str, list[Hit]] = {}
        try:
            # Pipelined: the settings travel with the first statement; the rows of the statements sent last
            # come back with the closing Sync.
            async with self.db.reads(tenant_id, recall_settings(cfg)) as conn:
                if corpus is None or analysis is None or plan is None:
                    corpus = await self.corpora.get(conn, tenant_id, model)
                    analysis = _analyse(req, corpus, cfg)
                    owned = await self.scopes.count(conn, tenant_id, who, model)
                    plan = self.scopes.plan(corpus, owned, cfg.candidates, req.max_items)
                    side = await begin_dense(corpus, analysis, plan)
                if side is not None and not cfg.lexical:  # dense alone: lexical only if the embedder fails
                    found, side = await side, None
                    lists.update(found.lists)
                use_lexical = cfg.lexical or found.vector is None  # degrade to lexical, never to nothing
                # Beside the dense retrievers, a query made only of this tenant's near stop words (each in
                # more memories than the postings budget) has no lexical candidates; alone, lexical reads the
                # rarest of them whatever it costs.
                beside_dense = side is not None and gateway is not None
                scope_lexical = _scope_lexical(plan, corpus, cfg)
                if scope_lexical and beside_dense and plan.dense_rows:
                    plan = _lexical_rows(plan)
                search = replace(
                    base, identifiers=analysis.identifiers, names=analysis.names, fts=corpus.fts_config,
                    n_docs=corpus.n_docs,
                    avgdl=corpus.avgdl, rarest=not beside_dense, scope_lexical=scope_lexical,
                    scope_size=plan.scope_size or 0,
                    lexical_rows=plan.lexical_rows or 0,
                    # A query vector known now (given, or cached) lets these rows carry its cosines as well.
                    vector=found.vector if found.vector is not None else self._known(base, analysis, given),
                )  # fmt: skip
                sent_lexical = await lexical.RETRIEVER.send(conn, search) if use_lexical else None
                sent_identifiers = await identifiers.RETRIEVER.send(conn, search) if cfg.identifiers else None
                unknown = await followups.send_unknown_names(conn, tenant_id, corpus.fts_config, analysis.names)
            tail: list[Hit] = []
            if use_lexical:
                lists["lexical"], tail = await lexical.RETRIEVER.hits_and_tail(sent_lexical, search)
            names_unknown = await unknown.value()
            if sent_identifiers is not None:
                lists["identifier"] = await identifiers.RETRIEVER.hits(sent_identifiers, search)
            if search.vector is None and side is not None:  # the dense side may score them with its vector
                unscored.give(list(dict.fromkeys(h.id for hits in lists.values() for h in hits)))
            if side is not None:  # these reads ended while the dense side was still reading
                found, side = await side, None
                lists.update(found.lists)
            if tail:
                lists["lexical"] = lists["lexical"] + lexical.found_by_dense(tail, found.lists)
        finally:
            if side is not None:  # the lexical side failed: its error is raised once the dense side is done
                await asyncio.wait([side])
                if not side.cancelled():
                    side.exception()
        if found.vector is None and beside_dense and not lists.get("lexical"):  # the dense side failed after all
            fallback = replace(search, vector=None, rarest=True)
            lists["lexical"] = await lexical.RETRIEVER.hits(
                await lexical.RETRIEVER.send(await later(), fallback), fallback
            )
        evidence = Evidence(
            lists, has_vector=found.vector is not None, lexical=use_lexical, names_unknown=names_unknown,
            named_speakers=analysis.named_speakers, source_trust=corpus.source_trust,
        )  # fmt: skip
        evidence = await _read_for_ranking(later, search, corpus, evidence, found)
        assert plan is not None  # chosen with the first reads at the latest
        return Gathered(evidence, corpus, analysis, found.degraded_reason, plan)

    async def _dense_side(
        self,
        search: Search,
        analysis: QueryAnalysis,
        given: Vector | None,
        corpus: Corpus,
        plan: RecallPlan,
        unscored: _Unscored,
        gateway: EmbeddingGateway | None,
    ) -> _DenseSide:
        """The query vector (or why there is none) and the dense candidate lists, read on a connection of
        their own while the lexical side reads on the recall's. Rows the lexical side read without the query
        vector and handed over (``unscored``) by the time the vector is known get their cosines here too."""
        tenant_id = search.where.params["tenant_id"]
        qv, reason = await self._query_vector(tenant_id, search.cfg, analysis, given, gateway)
        if qv is None or gateway is None:
            return _DenseSide(None, reason, {}, {})
        exact = plan.name == "scope-exact"
        own = plan.name == "tenant-index"
        search = replace(
            search, vector=qv, dims=gateway.dimensions, own_index=own, scope=exact, index_owner=plan.index_owner,
            context=corpus.has_context, dense_rows=plan.dense_rows or 0,
        )  # fmt: skip
        retrievers = (dense.SELF, dense.CONTEXT) if corpus.has_context else (dense.SELF,)
        ids = unscored.take()
        # Pipelined: the settings, the statements and the closing Sync travel in one round trip; the rows
        # come back with the Sync.
        ef = scope.ef_search(plan, corpus, search.cfg.ef_search, search.dense_limit)
        # A large owner's statements are the owner's own, prepared per connection: on one that ran them.
        warm = ("owner", tenant_id, plan.index_owner) if plan.index_owner is not None else None
        async with self.db.reads(tenant_id, recall_settings(search.cfg, ef), warm=warm) as conn:
            sent = [(r, await r.send(conn, search)) for r in retrievers]
            cosines = await followups.send_cosines(conn, tenant_id, ids, qv, gateway.model_id)
        late = await cosines.value()
        return _DenseSide(qv, None, {r.name: await r.hits(cur, search) for r, cur in sent}, late)

    def _known(self, search: Search, analysis: QueryAnalysis, given: Vector | None) -> Vector | None:
        """The query vector if it is known without embedding anything (given, or in the cache)."""
        if not search.cfg.dense or search.model_id is None:
            return None
        if given is not None:
            return np.asarray(given, dtype=np.float32)
        return self.vectors.peek(search.where.params["tenant_id"], analysis.dense_text)

    async def _query_vector(
        self,
        tenant_id: str,
        cfg: RetrievalConfig,
        analysis: QueryAnalysis,
        given: Vector | None,
        gateway: EmbeddingGateway | None,
    ) -> tuple[Vector | None, str | None]:
        if not cfg.dense:
            return None, None
        if gateway is None:
            return None, "no embedder is configured; recall ran lexically"
        if given is not None:
            return np.asarray(given, dtype=np.float32), None
        try:
            return await self.vectors.embed(gateway, tenant_id, analysis.dense_text), None
        except ProviderError as exc:
            _log.warning("recall degraded to lexical: %s", exc)
            return None, f"embedder unavailable ({exc.message}); recall ran lexically"


def _scope_lexical(plan: RecallPlan, corpus: Corpus, cfg: RetrievalConfig) -> bool:
    """Lexical reads a small scope's own rows in a large tenant (``lexical.large``), when the
    scope is at most half of it: there a word's postings are mostly other users' memories. In a smaller
    tenant the postings are as cheap (reading a few hundred scope rows cost more), and BM25F keeps the
    tenant's statistics."""
    large = lexical.large(corpus.n_docs, cfg.lexical_postings_budget)
    scoped = plan.name in ("scope-exact", "owner-index")  # a large owner's postings are still its own
    return large and scoped and (plan.scope_size or 0) * 2 <= corpus.n_docs


def _lexical_rows(plan: RecallPlan) -> RecallPlan:
    """``plan`` with the scope's BM25F reading the rows of as many memories as its dense side returns,
    and the rest of the candidates as their scores alone (``lexical._WITH_TAIL``). Both rank the scope
    exactly (a walk of a graph the scope fills, nearly); a memory of that tail keeps its BM25F where the
    dense side found it, and is dropped where it did not: past the dense side's best by its cosine and past
    the first rows by its words. Each row read costs a memory lookup, its cosines and its Python work
    (docs/retrieval.md, "Scopes and plans")."""
    return plan.model_copy(update={
        "lexical_rows": plan.dense_rows, "reason": f"{plan.reason}, and so does BM25F over the scope",
    })  # fmt: skip


def _analyse(req: RecallRequest, corpus: Corpus, cfg: RetrievalConfig) -> QueryAnalysis:
    return analyse(
        req.query, corpus.speakers, strip_speakers=cfg.strip_speakers_from_dense_query,
        max_identifiers=cfg.max_identifiers,
    )  # fmt: skip


async def _read_for_ranking(
    later: Later, search: Search, corpus: Corpus, evidence: Evidence, found: _DenseSide
) -> Evidence:
    """``evidence`` with what ranking needs beyond the candidate lists, read after them: the cosines of rows
    read before the query vector was known and not scored since; with ``expand_relations``, the candidates'
    relations and the visible memories they lead to; with ``mmr``, the vectors; and the pairs that
    contradict each other, where the tenant has any. Without expansion, one round trip at most."""
    cfg, tenant_id, model, qv = search.cfg, search.where.params["tenant_id"], search.model_id, found.vector
    hits = [h for some in evidence.lists.values() for h in some]
    ids = list(dict.fromkeys(h.id for h in hits))
    late = dict(found.late)
    missed: list[uuid.UUID] = []
    if qv is not None and any(not h.row.scored for h in hits):
        scored = {h.id for h in hits if h.row.scored}
        missed = [i for i in ids if i not in scored and i not in late]
    relations: list[Relation] = []
    neighbours: dict[uuid.UUID, Row] = {}
    if cfg.expand_relations and ids:
        conn = await later()
        sent_late = await followups.send_cosines(conn, tenant_id, missed, qv, model)
        relations = await (await followups.send_relations(conn, tenant_id, ids)).value()
        late.update(await sent_late.value())
        missed, known = [], set(ids)
        fresh = list(dict.fromkeys(i for r in relations for i in (r.src_id, r.dst_id) if i not in known))
        neighbours = await (await followups.send_neighbours(conn, search.where, fresh)).value()
        ids += neighbours
    vectors_wanted = cfg.mmr and qv is not None and bool(ids)
    pairs_wanted = corpus.has_contradictions and len(ids) > 1
    vectors: dict[uuid.UUID, np.ndarray[Any, Any]] = {}
    contradictions: set[frozenset[uuid.UUID]] = set()
    if missed or vectors_wanted or pairs_wanted:
        conn = await later()
        sent_late = await followups.send_cosines(conn, tenant_id, missed, qv, model)
        sent_vectors = await followups.send_vectors(conn, tenant_id, ids, model) if vectors_wanted else None
        sent_pairs = await followups.send_contradictions(conn, tenant_id, ids) if pairs_wanted else None
        late.update(await sent_late.value())
        vectors = await sent_vectors.value() if sent_vectors else {}
        contradictions = await sent_pairs.value() if sent_pairs else set()
    return replace(evidence, late_cosines=late, relations=relations, neighbours=neighbours, vectors=vectors,
                   contradictions=contradictions)  # fmt: skip


class Later:
    """A recall's second round of reads (``Database.reads``), opened on first use (``await later()``): what
    only some recalls need after the candidates (see ``_read_for_ranking``, and the long contents of what
    the packet holds). Ends on leaving the block."""

    def __init__(self, db: Database, tenant_id: str, cfg: RetrievalConfig) -> None:
        self._db, self._tenant_id, self._cfg = db, tenant_id, cfg
        self._stack = contextlib.AsyncExitStack()
        self._conn: Conn | None = None

    async def __aenter__(self) -> Later:
        return self

    async def __call__(self) -> Conn:
        if self._conn is None:
            opened = self._db.reads(self._tenant_id, recall_settings(self._cfg))
            self._conn = await self._stack.enter_async_context(opened)
        return self._conn

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._stack.__aexit__(*exc)


class _Unscored:
    """Ids of candidates the lexical side read before the query vector was known, handed to the dense side:
    if they are there when it has the vector, it reads their cosines in its own round trip."""

    def __init__(self) -> None:
        self._ids: list[uuid.UUID] | None = None

    def give(self, ids: list[uuid.UUID]) -> None:
        self._ids = ids

    def take(self) -> list[uuid.UUID]:
        """The ids given so far (none if the lexical side is still reading); each is taken once."""
        ids, self._ids = self._ids or [], []
        return ids
