"""The recall pipeline: filter-first candidates -> fusion -> utility -> (MMR) -> packet -> receipt."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from engram.errors import ProviderError
from engram.model import new_id
from engram.model.access import Principal
from engram.model.memory import Source
from engram.model.recall import RecallItem, RecallRequest, RecallResult, trusted
from engram.retrieval import candidates as cq
from engram.retrieval import packet as pk
from engram.retrieval import receipts as rc
from engram.retrieval.config import RetrievalConfig, preset
from engram.retrieval.conflicts import resolve
from engram.retrieval.corpus import Corpora, Corpus
from engram.retrieval.filter import Filter, build_filter
from engram.retrieval.fusion import Candidate, collect, fuse, mmr, rank, utility
from engram.retrieval.query import QueryAnalysis, analyse
from engram.retrieval.receipt_writer import ReceiptWriter
from engram.retrieval.tokens import TokenCounter, default_counter
from engram.retrieval.usage import Usage
from engram.store.database import Conn, Cursor, Database
from engram.store.embeddings import TENANT_INDEX_THRESHOLD

if TYPE_CHECKING:
    from engram.providers.base import Vector
    from engram.providers.gateway import EmbeddingGateway

_log = logging.getLogger(__name__)

CONFLICT_REACH = 5  # items beyond max_items looked at for disagreements (one may move up past another)


def recall_settings(cfg: RetrievalConfig) -> dict[str, str]:
    """Settings for a recall's reads: HNSW iterative scans (filtered queries keep their recall)."""
    return {
        "hnsw.iterative_scan": "relaxed_order",
        "hnsw.ef_search": str(cfg.ef_search),
        "max_parallel_workers_per_gather": "0",  # a worker costs more to start than these queries take
    }


def dense_settings(cfg: RetrievalConfig) -> dict[str, str]:
    """The dense side's settings: ``recall_settings``, and generic plans for its statements (prepared at
    first use, ``candidates.send_dense``). A tenant's dense statement names the tenant, so each large tenant
    has its own: left to the defaults, one is planned again until the same connection has run it ten times
    (five before psycopg prepares it, five custom plans after), which a tenant asking now and then never
    reaches (0.9 ms a plan). Its generic plan is the custom one: the literals decide the index."""
    return {**recall_settings(cfg), "plan_cache_mode": "force_generic_plan"}


class Retriever:
    """Holds what outlives a recall: the query vectors, the tenants' corpus statistics (``corpora``), usage
    counts (``usage``) and the receipt writer."""

    def __init__(
        self, db: Database, gateway: EmbeddingGateway | None, *, query_cache: int = 2048, inline_receipts: bool = False
    ) -> None:
        self.db = db
        self.receipts = ReceiptWriter(db, inline=inline_receipts)
        self.gateway = gateway
        # Keyed by tenant too: a hit must not tell one tenant what another asked (by its speed).
        self._vectors: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self._query_cache = query_cache
        self.corpora = Corpora(db)
        self.usage = Usage(db)
        self.token_counter: TokenCounter | None = None  # None: default_counter() (exact cl100k when installed)

    # --- caches ---------------------------------------------------------------------------------------

    def clear_query_cache(self) -> None:
        self._vectors.clear()

    async def query_vector(self, tenant_id: str, text: str) -> Vector:
        assert self.gateway is not None
        key = (tenant_id, text)
        hit = self._vectors.get(key)
        if hit is not None:
            self._vectors.move_to_end(key)
            return hit
        vector = (await self.gateway.embed([text]))[0]
        self._vectors[key] = vector
        if len(self._vectors) > self._query_cache:
            self._vectors.popitem(last=False)
        return vector

    def _model_id(self) -> str | None:
        return self.gateway.model_id if self.gateway else None

    async def read_corpus(self, conn: Conn, tenant_id: str) -> Corpus:
        """The tenant's corpus statistics, read now on ``conn``."""
        return await self.corpora.read(conn, tenant_id, self._model_id())

    async def _dense_side(
        self,
        tenant_id: str,
        f: Filter,
        cfg: RetrievalConfig,
        analysis: QueryAnalysis,
        given: Vector | None,
        corpus: Corpus,
        unscored: _Unscored,
    ) -> tuple[Vector | None, str | None, dict[str, list[cq.Hit]]]:
        """The query vector (or why there is none) and the dense candidate lists, read on a connection of
        their own while the lexical side reads on the recall's. Rows the lexical side read without the query
        vector and handed over (``unscored``) by the time the vector is known get their cosines here too."""
        qv, reason = await self._dense_query(tenant_id, cfg, analysis, given)
        if qv is None:
            return None, reason, {}
        assert self.gateway is not None
        model, dims = self.gateway.model_id, self.gateway.dimensions
        own = corpus.own_index
        exact = not own and corpus.n_docs < TENANT_INDEX_THRESHOLD  # below it, no tenant gets its own index
        rows = unscored.take()
        # Pipelined: the settings, the queries and the closing Sync travel in one round trip; the rows come
        # back with the Sync.
        async with self.db.reads(tenant_id, dense_settings(cfg)) as conn:
            sent = {"dense": await cq.send_dense(conn, f, qv, cfg, model_id=model, dims=dims, context=False,
                                                 own_index=own, exact=exact)}  # fmt: skip
            if corpus.has_context:
                sent["dense_context"] = await cq.send_dense(
                    conn, f, qv, cfg, model_id=model, dims=dims, context=True, own_index=own, exact=exact
                )
            cosines = await cq.send_cosines(conn, tenant_id, rows, qv, model)
        await cq.set_cosines(cosines, rows)
        return qv, None, {name: await cq.dense_hits(cur) for name, cur in sent.items()}

    def forget_corpus(self, tenant_id: str) -> None:
        """Read the tenant's corpus statistics again at its next recall (its settings changed)."""
        self.corpora.forget(tenant_id)

    def note_context(self, tenant_id: str) -> None:
        """This tenant now has context vectors: stop skipping the dense_context retriever."""
        self.corpora.note_context(tenant_id)

    # --- recall ---------------------------------------------------------------------------------------

    async def recall(
        self,
        tenant_id: str,
        req: RecallRequest,
        *,
        who: Principal,
        config: RetrievalConfig | None = None,
        query_vector: Vector | None = None,
    ) -> RecallResult:
        """Recall for ``req``, whose user and agent are those the caller acts as (bound by the service)."""
        started = time.perf_counter()
        now = datetime.now(UTC)
        cfg = config or preset(req.preset)
        f = build_filter(tenant_id, req)
        receipt_id = new_id()
        model = self.gateway.model_id if self.gateway else None
        # The dense side (embed the query, read its candidates on a connection of its own) runs beside the
        # lexical side; with the tenant's statistics cached it starts before anything else.
        corpus = self.corpora.cached(tenant_id, model)
        analysis = self._analyse(req, corpus, cfg) if corpus else None
        unscored = _Unscored()
        dense = (
            self._begin_dense(tenant_id, f, cfg, analysis, query_vector, corpus, unscored)
            if corpus and analysis
            else None
        )
        qv: Vector | None = None
        degraded_reason: str | None = None
        lists: dict[str, list[cq.Hit]] = {}
        try:
            # Pipelined: the settings travel with the first statement; the rows of the statements sent last
            # come back with the closing Sync.
            async with self.db.reads(tenant_id, recall_settings(cfg)) as conn:
                if corpus is None or analysis is None:
                    corpus = await self.corpora.get(conn, tenant_id, model)
                    analysis = self._analyse(req, corpus, cfg)
                    dense = self._begin_dense(tenant_id, f, cfg, analysis, query_vector, corpus, unscored)
                if dense is not None and not cfg.lexical:  # dense alone: lexical only if the embedder fails
                    qv, degraded_reason, found = await dense
                    lists.update(found)
                    dense = None
                use_lexical = cfg.lexical or qv is None  # degrade to lexical, never to nothing
                # A query vector known now (given, or cached) lets the lexical side read its cosines as well.
                known = self._known_vector(tenant_id, cfg, analysis, query_vector) if qv is None else qv
                identifiers = cfg.identifiers and bool(analysis.identifiers)
                # Beside the dense retrievers, a query made only of this tenant's near stop words (each in
                # more memories than the postings budget) has no lexical candidates; alone, lexical reads the
                # rarest of them whatever it costs.
                beside_dense = dense is not None and self.gateway is not None
                # Each statement chooses its terms itself: all of them travel in one round trip, and their
                # rows come back with the Sync.
                lexical = (
                    await self._send_lexical(conn, f, cfg, corpus, req.query, known, not beside_dense)
                    if use_lexical
                    else None
                )
                sent_identifiers = (
                    await cq.send_identifiers(conn, f, analysis.identifiers, cfg, vector=known, model_id=model)
                    if identifiers
                    else None
                )
                sent_unknown = await cq.send_unknown_names(conn, tenant_id, corpus.fts_config, analysis.names)
            if use_lexical:
                lists["lexical"] = await cq.lexical_hits(lexical)
            unknown = await cq.unknown_names(sent_unknown)
            if sent_identifiers is not None:
                lists["identifier"] = await cq.identifier_rows(
                    sent_identifiers, len(analysis.identifiers), cfg.candidates
                )
            if known is None and dense is not None:  # the dense side may score them with its vector
                unscored.give([h.row for hits in lists.values() for h in hits])
            if dense is not None:  # its reads ended while the dense side was still reading
                qv, degraded_reason, found = await dense
                lists.update(found)
                dense = None
        finally:
            if dense is not None:  # the lexical side failed: its error is raised once the dense side is done
                await asyncio.wait([dense])
                if not dense.cancelled():
                    dense.exception()
        # What is left needs the database only now and then: reads of its own, opened on first use.
        async with _Later(self.db, tenant_id, cfg) as later:
            if qv is None and beside_dense and not lists.get("lexical"):  # the dense side failed after all
                lists["lexical"] = await cq.lexical_hits(
                    await self._send_lexical(await later(), f, cfg, corpus, req.query, None, True)
                )
            cands = collect(lists)
            if qv is not None and model is not None:  # read before the query vector was known, not scored since
                missed = [c.row for c in cands if "cos_self" not in c.row]
                if missed:
                    await cq.add_cosines(await later(), tenant_id, missed, qv, model)
            effective = cfg if use_lexical == cfg.lexical else cfg.model_copy(update={"lexical": True})
            fuse(cands, effective, named_speakers=analysis.named_speakers)
            if cfg.expand_relations and cands:
                cands += await self._expand(await later(), f, tenant_id, cands, qv, model, cfg, req.max_items)
            utility(cands, cfg, req.as_of or now, corpus.source_trust)
            ranked = rank([c for c in cands if c.relevant])
            if ranked and _out_of_reach(cands, unknown, cfg):
                ranked = []
            if cfg.mmr and ranked and qv is not None:
                vectors = await self._vectors_of(await later(), tenant_id, ranked[: req.max_items * 4], model)
                ranked = mmr(ranked, vectors, cfg.mmr_lambda, req.max_items)
            top = ranked[: req.max_items * 4]  # as far as the packet can reach
            head = min(len(top), req.max_items + CONFLICT_REACH)
            related = (
                await cq.contradictions(await later(), tenant_id, [c.id for c in top[:head]])
                if corpus.has_contradictions and head > 1
                else set()
            )
            top[:head] = resolve(top[:head], related)
            missing = [c.id for c in top if c.row["content"] is None]  # too long to come with the candidates
            long = await cq.contents(await later(), tenant_id, missing) if missing else {}
        items = (_item(c, long) for c in top if c.row["content"] is not None or c.id in long)  # (or deleted since)
        packet = pk.build(
            items, max_items=req.max_items, max_tokens=req.max_tokens, count=self.token_counter or default_counter()
        )
        placed, tokens = packet.placed, packet.tokens
        abstain = not ranked
        latency_ms = (time.perf_counter() - started) * 1000.0
        row = rc.ReceiptRow(
            tenant_id=tenant_id,
            id=receipt_id,
            created_at=now,
            actor=who.actor,
            query=req.query,
            request=_request_record(req, cfg, analysis, corpus.n_docs, unknown),
            retrievers={name: hits[: cfg.receipt_candidates] for name, hits in lists.items()},
            selected=[_selected(i) for i in placed],
            packet_tokens=tokens,
            latency_ms=latency_ms,
            degraded=degraded_reason is not None,
            abstained=abstain,
            key_id=who.key_id,
            role=who.role,
            acting_user_id=req.user_id,
            acting_agent_id=req.agent_id,
        )
        await self.receipts.store(row)
        self.usage.touch(tenant_id, [i.id for i in placed])
        return RecallResult(
            items=placed,
            packet=packet.text,
            packet_tokens=tokens,
            receipt_id=receipt_id,
            degraded=degraded_reason is not None,
            degraded_reason=degraded_reason,
            abstain=abstain,
            empty_reason=packet.empty_reason,
            latency_ms=round(latency_ms, 3),
        )

    def _analyse(self, req: RecallRequest, corpus: Corpus, cfg: RetrievalConfig) -> QueryAnalysis:
        return analyse(
            req.query, corpus.speakers, strip_speakers=cfg.strip_speakers_from_dense_query,
            max_identifiers=cfg.max_identifiers,
        )  # fmt: skip

    def _begin_dense(
        self,
        tenant_id: str,
        f: Filter,
        cfg: RetrievalConfig,
        analysis: QueryAnalysis,
        given: Vector | None,
        corpus: Corpus,
        unscored: _Unscored,
    ) -> asyncio.Task[tuple[Vector | None, str | None, dict[str, list[cq.Hit]]]] | None:
        if not cfg.dense:
            return None
        return asyncio.create_task(self._dense_side(tenant_id, f, cfg, analysis, given, corpus, unscored))

    async def _send_lexical(
        self,
        conn: Conn,
        f: Filter,
        cfg: RetrievalConfig,
        corpus: Corpus,
        query: str,
        vector: Vector | None,
        rarest: bool,
    ) -> Cursor | None:
        model = self.gateway.model_id if self.gateway else None
        return await cq.send_lexical(
            conn, f, None, cfg, n_docs=corpus.n_docs, avgdl=corpus.avgdl, query=query, fts=corpus.fts_config,
            vector=vector, model_id=model, rarest=rarest,
        )  # fmt: skip

    def _known_vector(
        self, tenant_id: str, cfg: RetrievalConfig, analysis: QueryAnalysis, given: Vector | None
    ) -> Vector | None:
        """The query vector if it is known without embedding anything (given, or in the cache)."""
        if not cfg.dense or self.gateway is None:
            return None
        if given is not None:
            return np.asarray(given, dtype=np.float32)
        return self._vectors.get((tenant_id, analysis.dense_text))

    async def _dense_query(
        self, tenant_id: str, cfg: RetrievalConfig, analysis: QueryAnalysis, given: Vector | None
    ) -> tuple[Vector | None, str | None]:
        if not cfg.dense:
            return None, None
        if self.gateway is None:
            return None, "no embedder is configured; recall ran lexically"
        if given is not None:
            return np.asarray(given, dtype=np.float32), None
        try:
            return await self.query_vector(tenant_id, analysis.dense_text), None
        except ProviderError as exc:
            _log.warning("recall degraded to lexical: %s", exc)
            return None, f"embedder unavailable ({exc.message}); recall ran lexically"

    async def _expand(
        self,
        conn: Conn,
        f: Filter,
        tenant_id: str,
        cands: list[Candidate],
        qv: Any,
        model: str | None,
        cfg: RetrievalConfig,
        k: int,
    ) -> list[Candidate]:
        """One hop along relations from the current best: neighbours inherit a decayed share of the score."""
        top = sorted((c for c in cands if c.relevant), key=lambda c: -c.fused)[:k]
        by_id = {c.id: c for c in top}
        existing = {c.id: c for c in cands}
        rows = await (
            await conn.execute(cq.RELATED, {"tenant_id": tenant_id, "ids": list(by_id)}, binary=True)
        ).fetchall()
        offers: dict[uuid.UUID, tuple[float, str]] = {}
        for r in rows:
            for here, there in ((r["src_id"], r["dst_id"]), (r["dst_id"], r["src_id"])):
                if here in by_id and there not in by_id:
                    value = by_id[here].fused * float(r["weight"]) * cfg.relation_decay
                    if value > offers.get(there, (0.0, ""))[0]:
                        offers[there] = (value, f"related:{r['type']}:{here}")
        added: list[Candidate] = []
        for mid, (value, reason) in offers.items():
            if mid in existing:  # already a candidate (perhaps a weak one): the edge adds to its score
                c = existing[mid]
                c.fused += value
                c.ranks["relation"] = 1
                c.signals["relation"] = value
                c.reasons.append(reason)
        fresh = [mid for mid in offers if mid not in existing]
        allowed = await cq.visible(conn, f, fresh)
        details = await cq.details(conn, tenant_id, list(allowed), qv, model)
        for mid in allowed:
            if mid in details:
                value, reason = offers[mid]
                c = Candidate(mid, details[mid], ranks={"relation": 1}, reasons=[reason], fused=value)
                c.signals["relation"] = value
                added.append(c)
        return added

    async def _vectors_of(
        self, conn: Conn, tenant_id: str, cands: list[Candidate], model: str | None
    ) -> dict[uuid.UUID, np.ndarray[Any, Any]]:
        if model is None:
            return {}
        rows = await (
            await conn.execute(
                "SELECT memory_id, embedding FROM memory_embeddings WHERE tenant_id = %s AND model_id = %s"
                " AND memory_id = ANY(%b)",
                [tenant_id, model, [c.id for c in cands]],
            )
        ).fetchall()
        return {r["memory_id"]: r["embedding"].to_numpy() for r in rows}

    async def drain(self) -> None:
        """Finish statistics refreshes and write pending usage counts and receipts now (on shutdown, and in
        tests)."""
        await self.corpora.drain()
        await self.usage.drain()
        await self.receipts.close()


def _item(c: Candidate, long: dict[uuid.UUID, str]) -> RecallItem:
    """The item, from the candidate's row (stored memories, valid when written: not validated again)."""
    r = c.row
    return trusted(RecallItem, {
        "id": c.id,
        "content": r["content"] if r["content"] is not None else long[c.id],
        "summary": r["summary"],
        "kind": r["kind"],
        "source": trusted(Source, {"type": r["source_type"], "ref": r["source_ref"]}),
        "recorded_at": r["recorded_at"],
        "valid_from": r["valid_from"],
        "confidence": float(r["confidence"]),
        "importance": float(r["importance"]),
        "score": round(c.score, 6),
        "ranks": dict(c.ranks),
        "signals": {k: round(v, 6) for k, v in c.signals.items() if k != "dense_ok"},
        "reasons": c.reasons,
        "require_citation": bool(r["require_citation"]),
        "ref": 0,
        "trust": c.trust,
        "conflicts_with": c.conflicts,
    })  # fmt: skip


def _selected(item: RecallItem) -> dict[str, Any]:
    return {
        "id": str(item.id),
        "rank": item.ref,
        "ref": item.ref,
        "conflicts_with": [str(i) for i in item.conflicts_with],
        "score": item.score,
        "ranks": item.ranks,
        "signals": item.signals,
        "reasons": item.reasons,
    }


def _out_of_reach(cands: list[Candidate], unknown: float | None, cfg: RetrievalConfig) -> bool:
    """The names the query mentions are unknown to the tenant, nothing is close in meaning and no identifier
    matched: a question about someone or something it knows nothing of (abstain rather than offer what
    merely shares a word)."""
    if unknown is None or unknown < cfg.abstain_unknown_names or any("identifier" in c.ranks for c in cands):
        return False
    closest = max(
        (max(c.signals.get("cos_self", -1.0), c.signals.get("cos_context", -1.0)) for c in cands), default=-1.0
    )
    return closest < cfg.abstain_similarity


def _request_record(
    req: RecallRequest, cfg: RetrievalConfig, analysis: QueryAnalysis, n_docs: int, unknown: float | None
) -> dict[str, Any]:
    return {
        **req.model_dump(mode="json", exclude={"query"}),
        "config": cfg.model_dump(mode="json"),
        "analysis": {
            "identifiers": analysis.identifiers,
            "named_speakers": analysis.named_speakers,
            "dense_text": analysis.dense_text,
            "names": analysis.names,
            "names_unknown": None if unknown is None else round(unknown, 4),
        },
        "corpus_size": n_docs,
    }


class _Later:
    """A recall's second round of reads (``Database.reads``), opened on first use (``await later()``): what
    only some recalls need after fusion (cosines of rows read before the query vector was known, relations,
    MMR's vectors, long contents). Ends on leaving the block."""

    def __init__(self, db: Database, tenant_id: str, cfg: RetrievalConfig) -> None:
        self._db, self._tenant_id, self._cfg = db, tenant_id, cfg
        self._stack = contextlib.AsyncExitStack()
        self._conn: Conn | None = None

    async def __aenter__(self) -> _Later:
        return self

    async def __call__(self) -> Conn:
        if self._conn is None:
            opened = self._db.reads(self._tenant_id, recall_settings(self._cfg))
            self._conn = await self._stack.enter_async_context(opened)
        return self._conn

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._stack.__aexit__(*exc)


class _Unscored:
    """Candidate rows the lexical side read before the query vector was known, handed to the dense side:
    if they are there when it has the vector, it reads their cosines in its own round trip."""

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] | None = None

    def give(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def take(self) -> list[dict[str, Any]]:
        """The rows given so far (none if the lexical side is still reading); each row is taken once."""
        rows, self._rows = self._rows or [], []
        return rows
