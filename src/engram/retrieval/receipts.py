"""Recall receipts (SPEC 5.6): stored with every recall, read back by id."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.model.recall import Receipt
from engram.store.database import Conn

# Receipts of any tenants, in one statement (migration 0006), committed asynchronously. The JSON arrays go in
# binary: as text, every quote in every document is escaped by psycopg in Python (~1 ms a receipt).
INSERT: LiteralString = """
SELECT set_config('synchronous_commit', 'off', true),
       engram_insert_receipts(%s::text[], %s::uuid[], %s::timestamptz[], %s::text[], %s::text[], %b::jsonb[],
                              %b::jsonb[], %b::jsonb[], %s::integer[], %s::real[], %s::boolean[], %s::boolean[])
"""
SELECT: LiteralString = """
SELECT id, created_at, actor, query, request, retrievers, selected, packet_tokens, latency_ms, degraded, abstained
  FROM recall_receipts WHERE tenant_id = %s AND id = %s
"""
FOR_MEMORY: LiteralString = """
SELECT id, created_at, actor, query, request, retrievers, selected, packet_tokens, latency_ms, degraded, abstained
  FROM recall_receipts WHERE tenant_id = %s AND selected_ids @> %s ORDER BY created_at DESC LIMIT %s
"""
# Usage counts of any tenants, committed asynchronously like the receipts, in one statement.
TOUCH: LiteralString = "SELECT set_config('synchronous_commit', 'off', true), engram_touch_memories(%s, %s, %s)"


@dataclass(frozen=True)
class ReceiptRow:
    """A receipt as it is stored (``insert``), built by the recall that answered. ``retrievers`` holds each
    retriever's candidates in rank order (objects with ``id`` and ``score``, such as ``candidates.Hit``);
    they are laid out column-wise (``columns``) when the row is written, after the recall has answered."""

    tenant_id: str
    id: uuid.UUID
    created_at: datetime
    actor: str
    query: str
    request: dict[str, Any]
    retrievers: Mapping[str, Sequence[Any]]
    selected: list[dict[str, Any]]
    packet_tokens: int
    latency_ms: float
    degraded: bool
    abstained: bool

    def values(self) -> list[Any]:
        return [
            self.tenant_id, self.id, self.created_at, self.actor, self.query, Jsonb(self.request),
            Jsonb(columns(self.retrievers)), Jsonb(self.selected), self.packet_tokens, self.latency_ms, self.degraded,
            self.abstained,
        ]  # fmt: skip


def columns(retrievers: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, list[Any]]]:
    """Each retriever's candidates in rank order (objects with ``id`` and ``score``, such as
    ``candidates.Hit``), column-wise: ``{"ids": [...], "scores": [...]}`` per retriever (a few hundred small
    objects cost more to build and encode than the rest of the recall's bookkeeping); read back as
    ``[{"id", "rank", "score"}, ...]``."""
    return {
        name: {"ids": [str(h.id) for h in hits], "scores": [_score(h.score) for h in hits]}
        for name, hits in retrievers.items()
    }


def _score(score: float) -> float | None:
    """Rounded as the items report it; None (JSON null) if it is not a number, which JSON cannot hold (a
    cosine with a zero vector is NaN)."""
    return round(score, 6) if math.isfinite(score) else None


async def insert(conn: Conn, rows: Sequence[ReceiptRow]) -> None:
    """Store receipts, of any tenants, in one statement (a transaction with no tenant set: ``Database.app``).
    A receipt already stored is left as it is."""
    await conn.execute(INSERT, [list(column) for column in zip(*(r.values() for r in rows), strict=True)])


def _receipt(row: dict[str, Any]) -> Receipt:
    retrievers = {
        name: [{"id": i, "rank": r, "score": s} for r, (i, s) in enumerate(zip(v["ids"], v["scores"], strict=True), 1)]
        if isinstance(v, dict)
        else v  # stored row-wise by an earlier version
        for name, v in row["retrievers"].items()
    }
    return Receipt.model_validate({**row, "retrievers": retrievers})


async def get(conn: Conn, tenant_id: str, receipt_id: uuid.UUID) -> Receipt | None:
    row = await (await conn.execute(SELECT, [tenant_id, receipt_id])).fetchone()
    return _receipt(row) if row else None


async def for_memory(conn: Conn, tenant_id: str, memory_id: uuid.UUID, limit: int = 50) -> list[Receipt]:
    """The receipts whose selection included this memory: "why was this used"."""
    rows = await (await conn.execute(FOR_MEMORY, [tenant_id, [memory_id], limit])).fetchall()
    return [_receipt(r) for r in rows]
