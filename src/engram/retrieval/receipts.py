"""Recall receipts (SPEC 5.6): stored with every recall, read back by id."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString

import numpy as np
import orjson
from psycopg.types.json import Jsonb

from engram.model.recall import Receipt
from engram.store.database import Conn

# Receipts of any tenants, in one statement (migration 0008), committed asynchronously: the batch travels as
# one JSON document, encoded by orjson (the receipts' candidate lists, their uuids and scores, take most of it).
INSERT: LiteralString = "SELECT set_config('synchronous_commit', 'off', true), engram_insert_receipt_batch(%b::jsonb)"
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

    def document(self) -> dict[str, Any]:
        """The receipt as its batch's JSON document holds it (``_dumps``)."""
        return {
            "tenant_id": self.tenant_id, "id": self.id, "created_at": self.created_at, "actor": self.actor,
            "query": self.query, "request": self.request, "retrievers": columns(self.retrievers),
            "selected": self.selected, "packet_tokens": self.packet_tokens, "latency_ms": self.latency_ms,
            "degraded": self.degraded, "abstained": self.abstained,
        }  # fmt: skip


def columns(retrievers: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """Each retriever's candidates in rank order (objects with ``id`` and ``score``, such as
    ``candidates.Hit``), column-wise: ``{"ids": [...], "scores": [...]}`` per retriever, scores rounded as
    the items report them and a score that is not a number (a cosine with a zero vector) as null, which
    JSON cannot hold otherwise. Left as uuids and numpy arrays for ``_dumps`` (a few hundred small objects
    cost more to build and encode than the rest of the recall's bookkeeping); read back as
    ``[{"id", "rank", "score"}, ...]``."""
    return {
        name: {"ids": [h.id for h in hits], "scores": np.array([h.score for h in hits], dtype=np.float64).round(6)}
        for name, hits in retrievers.items()
    }


# uuids, datetimes and numpy arrays natively; NaN as null.
_dumps = functools.partial(orjson.dumps, option=orjson.OPT_SERIALIZE_NUMPY)


async def insert(conn: Conn, rows: Sequence[ReceiptRow]) -> None:
    """Store receipts, of any tenants, in one statement (as engram_app with no tenant set: ``Database.app``).
    A receipt already stored is left as it is."""
    await conn.execute(INSERT, [Jsonb([r.document() for r in rows], dumps=_dumps)])


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
