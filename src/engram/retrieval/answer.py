"""Recall's third stage: the answer from the ranked candidates. Their items (with the long contents their
rows left out, read now for the few the packet can reach), the prompt packet, the receipt that says why,
and the result."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.model.access import Principal
from engram.model.memory import Source
from engram.model.recall import RecallItem, RecallRequest, RecallResult, trusted
from engram.retrieval import packet as pk
from engram.retrieval.config import RetrievalConfig
from engram.retrieval.fusion import Candidate
from engram.retrieval.gather import Gathered, Later
from engram.retrieval.query import QueryAnalysis
from engram.retrieval.rank import Ranked
from engram.retrieval.receipts import ReceiptRow
from engram.retrieval.retrievers import followups
from engram.retrieval.tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class Answer:
    result: RecallResult
    receipt: ReceiptRow


async def long_contents(later: Later, tenant_id: str, cands: Sequence[Candidate]) -> dict[uuid.UUID, str]:
    """The contents too long to come with the candidate rows, of these candidates."""
    missing = [c.id for c in cands if c.row.content is None]
    return await followups.contents(await later(), tenant_id, missing) if missing else {}


def answer(
    tenant_id: str,
    req: RecallRequest,
    cfg: RetrievalConfig,
    *,
    who: Principal,
    gathered: Gathered,
    ranked: Ranked,
    long: dict[uuid.UUID, str],
    receipt_id: uuid.UUID,
    now: datetime,
    started: float,
    count: TokenCounter,
) -> Answer:
    """The result of a recall that started at ``started`` (``time.perf_counter``), and its receipt."""
    packet = pk.build(items(ranked.candidates, long), max_items=req.max_items, max_tokens=req.max_tokens, count=count)
    placed, tokens = packet.placed, packet.tokens
    degraded_reason = gathered.degraded_reason
    latency_ms = (time.perf_counter() - started) * 1000.0
    ev = gathered.evidence
    row = ReceiptRow(
        tenant_id=tenant_id,
        id=receipt_id,
        created_at=now,
        actor=who.actor,
        query=req.query,
        request={
            **_request_record(req, cfg, gathered.analysis, gathered.corpus.n_docs, ev.names_unknown),
            "plan": gathered.plan.model_dump(mode="json"),
        },
        retrievers={name: hits[: cfg.receipt_candidates] for name, hits in ev.lists.items()},
        selected=[_selected(i) for i in placed],
        packet_tokens=tokens,
        latency_ms=latency_ms,
        degraded=degraded_reason is not None,
        abstained=ranked.abstain,
        key_id=who.key_id,
        role=who.role,
        acting_user_id=req.user_id,
        acting_agent_id=req.agent_id,
    )
    result = RecallResult(
        items=placed,
        packet=packet.text,
        packet_tokens=tokens,
        receipt_id=receipt_id,
        degraded=degraded_reason is not None,
        degraded_reason=degraded_reason,
        abstain=ranked.abstain,
        empty_reason=packet.empty_reason,
        latency_ms=round(latency_ms, 3),
        plan=gathered.plan,
    )
    return Answer(result, row)


def items(cands: Sequence[Candidate], long: dict[uuid.UUID, str]) -> Iterator[RecallItem]:
    """The items of these candidates, in order (one whose long content is gone was deleted since)."""
    return (_item(c, long) for c in cands if c.row.content is not None or c.id in long)


def _item(c: Candidate, long: dict[uuid.UUID, str]) -> RecallItem:
    """The item, from the candidate's row (stored memories, valid when written: not validated again)."""
    r = c.row
    return trusted(RecallItem, {
        "id": c.id,
        "content": r.content if r.content is not None else long[c.id],
        "summary": r.summary,
        "kind": r.kind,
        "source": trusted(Source, {"type": r.source_type, "ref": r.source_ref}),
        "recorded_at": r.recorded_at,
        "valid_from": r.valid_from,
        "confidence": float(r.confidence),
        "importance": float(r.importance),
        "score": round(c.score, 6),
        "ranks": dict(c.ranks),
        "signals": {k: round(v, 6) for k, v in c.signals.items() if k != "dense_ok"},
        "reasons": c.reasons,
        "require_citation": bool(r.require_citation),
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
