"""Recall receipts (SPEC 5.6): stored with every recall, read back by id."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.model.recall import Receipt
from engram.store.database import Conn

# Each retriever's candidates arrive as four flat binary arrays and become JSON in the server: building and
# encoding a few hundred small dicts in Python cost more than the rest of the insert.
INSERT: LiteralString = """
INSERT INTO recall_receipts (tenant_id, id, actor, query, request, retrievers, selected, packet_tokens,
                             latency_ms, degraded, abstained)
VALUES (%(tenant_id)s, %(id)s, %(actor)s, %(query)s, %(request)s,
(SELECT coalesce(jsonb_object_agg(n.name, coalesce(h.hits, '[]'::jsonb)), '{}'::jsonb)
   FROM unnest(%(names)s::text[]) AS n(name)
   LEFT JOIN (SELECT c.name,
                     jsonb_agg(jsonb_build_object('id', c.id, 'rank', c.rank, 'score', round(c.score::numeric, 6))
                               ORDER BY c.rank) AS hits
                FROM unnest(%(hit_names)b::text[], %(hit_ids)b::uuid[], %(hit_ranks)b::int4[],
                            %(hit_scores)b::float8[]) AS c(name, id, rank, score)
               GROUP BY c.name) h ON h.name = n.name),
        %(selected)s, %(packet_tokens)s, %(latency_ms)s, %(degraded)s, %(abstained)s)
"""
SELECT: LiteralString = """
SELECT id, created_at, actor, query, request, retrievers, selected, packet_tokens, latency_ms, degraded, abstained
  FROM recall_receipts WHERE tenant_id = %s AND id = %s
"""
FOR_MEMORY: LiteralString = """
SELECT id, created_at, actor, query, request, retrievers, selected, packet_tokens, latency_ms, degraded, abstained
  FROM recall_receipts WHERE tenant_id = %s AND selected @> %s ORDER BY created_at DESC LIMIT %s
"""
TOUCH: LiteralString = "SELECT engram_touch_memories(%s, %s, %s)"


async def insert(
    conn: Conn,
    tenant_id: str,
    receipt_id: uuid.UUID,
    *,
    actor: str,
    query: str,
    request: dict[str, Any],
    retrievers: Mapping[str, Sequence[Any]],
    selected: list[dict[str, Any]],
    packet_tokens: int,
    latency_ms: float,
    degraded: bool,
    abstained: bool,
) -> None:
    """Store a receipt. ``retrievers`` maps each retriever to its candidates in rank order (objects with
    ``id`` and ``score``, such as ``candidates.Hit``), stored as ``[{"id", "rank", "score"}, ...]``."""
    names, ids, ranks, scores = [], [], [], []
    for name, hits in retrievers.items():
        for rank, hit in enumerate(hits, start=1):
            names.append(name)
            ids.append(hit.id)
            ranks.append(rank)
            scores.append(hit.score)
    params = {
        "tenant_id": tenant_id, "id": receipt_id, "actor": actor, "query": query, "request": Jsonb(request),
        "names": list(retrievers), "hit_names": names, "hit_ids": ids, "hit_ranks": ranks, "hit_scores": scores,
        "selected": Jsonb(selected), "packet_tokens": packet_tokens, "latency_ms": latency_ms,
        "degraded": degraded, "abstained": abstained,
    }  # fmt: skip
    await conn.execute(INSERT, params)


async def get(conn: Conn, tenant_id: str, receipt_id: uuid.UUID) -> Receipt | None:
    row = await (await conn.execute(SELECT, [tenant_id, receipt_id])).fetchone()
    return Receipt.model_validate(row) if row else None


async def for_memory(conn: Conn, tenant_id: str, memory_id: uuid.UUID, limit: int = 50) -> list[Receipt]:
    """The receipts whose selection included this memory: "why was this used"."""
    rows = await (await conn.execute(FOR_MEMORY, [tenant_id, Jsonb([{"id": str(memory_id)}]), limit])).fetchall()
    return [Receipt.model_validate(r) for r in rows]
