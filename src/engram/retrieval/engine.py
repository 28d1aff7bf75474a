"""The recall pipeline, in three stages: ``gather`` (the reads and their scheduling), ``rank`` (pure:
fusion, relevance floor, expansion, utility with trust, abstention, MMR, disagreements) and ``answer``
(items, packet, receipt). ``Retriever`` composes them and holds what outlives a recall: the query vector
cache, each tenant's corpus statistics, usage counts and the receipt writer."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from engram.model import new_id
from engram.model.access import Principal
from engram.model.recall import RecallRequest, RecallResult
from engram.observability import metrics, tracing
from engram.retrieval.answer import answer, long_contents
from engram.retrieval.config import RetrievalConfig, preset
from engram.retrieval.corpus import Corpora, Corpus
from engram.retrieval.gather import Gatherer, Later, QueryVectors
from engram.retrieval.rank import rank
from engram.retrieval.receipt_writer import ReceiptWriter
from engram.retrieval.scope import Scopes
from engram.retrieval.tokens import TokenCounter, default_counter
from engram.retrieval.usage import Usage
from engram.store.database import Conn, Database

if TYPE_CHECKING:
    from engram.providers.base import Vector
    from engram.providers.gateway import EmbeddingGateway


class Retriever:
    def __init__(
        self, db: Database, gateway: EmbeddingGateway | None, *, query_cache: int = 2048, inline_receipts: bool = False
    ) -> None:
        self.db = db
        self.gateway = gateway
        self.receipts = ReceiptWriter(db, inline=inline_receipts)
        self.corpora = Corpora(db)
        self.usage = Usage(db)
        self.vectors = QueryVectors(query_cache)
        self.scopes = Scopes()
        self.gatherer = Gatherer(db, self.corpora, self.vectors, self.scopes)
        self.token_counter: TokenCounter | None = None  # None: default_counter() (exact cl100k when installed)

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
        with tracing.tracer().start_as_current_span("engram.recall") as span:
            result = await self._recall(tenant_id, req, who, config, query_vector)
            span.set_attributes({"engram.plan": result.plan.name if result.plan else "none",
                                 "engram.items": len(result.items), "engram.degraded": result.degraded})  # fmt: skip
            return result

    async def _recall(
        self, tenant_id: str, req: RecallRequest, who: Principal, config: RetrievalConfig | None,
        query_vector: Vector | None,
    ) -> RecallResult:  # fmt: skip
        started = time.perf_counter()
        now = datetime.now(UTC)
        cfg = config or preset(req.preset)
        receipt_id = new_id()
        # What is read after the candidates (only some recalls): reads of their own, opened on first use.
        async with Later(self.db, tenant_id, cfg) as later:
            gathered = await self.gatherer.gather(tenant_id, req, cfg, self.gateway, query_vector, later)
            ranked = rank(gathered.evidence, cfg, at=req.as_of or now, max_items=req.max_items)
            long = await long_contents(later, tenant_id, ranked.candidates)
        done = answer(
            tenant_id, req, cfg, who=who, gathered=gathered, ranked=ranked, long=long, receipt_id=receipt_id,
            now=now, started=started, count=self.token_counter or default_counter(),
        )  # fmt: skip
        await self.receipts.store(done.receipt)
        self.usage.touch(tenant_id, [i.id for i in done.result.items])
        result = done.result
        plan = result.plan.name if result.plan is not None else None
        metrics.observe_recall(time.perf_counter() - started, plan, gathered.evidence.lists, result.degraded,
                               result.empty_reason if not result.items else None)  # fmt: skip
        return result

    def clear_query_cache(self) -> None:
        self.vectors.clear()

    async def read_corpus(self, conn: Conn, tenant_id: str) -> Corpus:
        """The tenant's corpus statistics, read now on ``conn``."""
        return await self.corpora.read(conn, tenant_id, self.gateway.model_id if self.gateway else None)

    def forget_corpus(self, tenant_id: str) -> None:
        """Read the tenant's corpus statistics again at its next recall (its settings changed)."""
        self.corpora.forget(tenant_id)
        self.scopes.forget(tenant_id)

    def note_context(self, tenant_id: str) -> None:
        """This tenant now has context vectors: stop skipping the dense_context retriever."""
        self.corpora.note_context(tenant_id)

    async def drain(self) -> None:
        """Finish statistics refreshes and write pending usage counts and receipts now (on shutdown, and in
        tests)."""
        await self.corpora.drain()
        await self.usage.drain()
        await self.receipts.close()
