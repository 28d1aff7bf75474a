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
from engram.store.database import Conn, Database

# A tenant's receipts of a batch, in one statement under its row-level security (``Database.tenants``: a
# batch of many tenants is one pipelined transaction, committed asynchronously). The receipts travel as one
# JSON document, encoded by orjson (their candidate lists, uuids and scores, take most of it).
ASYNC_COMMIT: LiteralString = "SELECT set_config('synchronous_commit', 'off', true)"
INSERT: LiteralString = """
INSERT INTO recall_receipts (tenant_id, id, created_at, actor, query, request, retrievers, selected, packet_tokens,
                             latency_ms, degraded, abstained, key_id, role, acting_user_id, acting_agent_id)
SELECT r.tenant_id, r.id, r.created_at, r.actor, r.query, r.request, r.retrievers, r.selected, r.packet_tokens,
       r.latency_ms, r.degraded, r.abstained, r.key_id, r.role, r.acting_user_id, r.acting_agent_id
  FROM jsonb_to_recordset(%b::jsonb) AS r(
           tenant_id text, id uuid, created_at timestamptz, actor text, query text, request jsonb, retrievers jsonb,
           selected jsonb, packet_tokens integer, latency_ms real, degraded boolean, abstained boolean, key_id uuid,
           role text, acting_user_id text, acting_agent_id text)
ON CONFLICT (tenant_id, id) DO NOTHING
"""
_COLUMNS: LiteralString = (
    "id, created_at, actor, query, request, retrievers, selected, packet_tokens, latency_ms, degraded, abstained,"
    " key_id, role, acting_user_id, acting_agent_id"
)
SELECT: LiteralString = "SELECT " + _COLUMNS + " FROM recall_receipts WHERE tenant_id = %s AND id = %s"
# The recalls that selected a memory; with ``only_user`` (an agent's view) only those that acted as ``user``.
FOR_MEMORY: LiteralString = (
    "SELECT " + _COLUMNS + " FROM recall_receipts"
    " WHERE tenant_id = %(tenant_id)s AND selected_ids @> %(ids)s"
    " AND (NOT %(only_user)s OR acting_user_id IS NOT DISTINCT FROM %(user)s)"
    " ORDER BY created_at DESC LIMIT %(limit)s"
)


@dataclass(frozen=True)
class ReceiptRow:
    """A receipt as it is stored (``insert``), built by the recall that answered. ``retrievers`` holds each
    retriever's candidates in rank order (objects with ``id`` and ``score``, such as ``retrievers.base.Hit``);
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
    key_id: uuid.UUID | None = None
    role: str | None = None
    acting_user_id: str | None = None
    acting_agent_id: str | None = None

    def document(self) -> dict[str, Any]:
        """The receipt as its batch's JSON document holds it (``_dumps``)."""
        return {
            "tenant_id": self.tenant_id, "id": self.id, "created_at": self.created_at, "actor": self.actor,
            "query": self.query, "request": self.request, "retrievers": columns(self.retrievers),
            "selected": self.selected, "packet_tokens": self.packet_tokens, "latency_ms": self.latency_ms,
            "degraded": self.degraded, "abstained": self.abstained, "key_id": self.key_id, "role": self.role,
            "acting_user_id": self.acting_user_id, "acting_agent_id": self.acting_agent_id,
        }  # fmt: skip


def columns(retrievers: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """Each retriever's candidates in rank order (objects with ``id`` and ``score``, such as
    ``retrievers.base.Hit``), column-wise: ``{"ids": [...], "scores": [...]}`` per retriever, scores rounded as
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


async def insert(db: Database, rows: Sequence[ReceiptRow]) -> None:
    """Store receipts of any tenants: each tenant's under its own row-level security, all in one pipelined
    transaction committed asynchronously. A receipt already stored is left as it is."""
    by_tenant: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_tenant.setdefault(r.tenant_id, []).append(r.document())
    async with db.tenants() as switch:
        await switch.conn.execute(ASYNC_COMMIT)
        for tenant_id, documents in by_tenant.items():
            conn = await switch(tenant_id)
            await conn.execute(INSERT, [Jsonb(documents, dumps=_dumps)])


def _receipt(row: dict[str, Any]) -> Receipt:
    principal = {
        "key_id": row.pop("key_id"), "role": row.pop("role"), "user_id": row.pop("acting_user_id"),
        "agent_id": row.pop("acting_agent_id"),
    }  # fmt: skip
    retrievers = {
        name: [{"id": i, "rank": r, "score": s} for r, (i, s) in enumerate(zip(v["ids"], v["scores"], strict=True), 1)]
        if isinstance(v, dict)
        else v  # stored row-wise by an earlier version
        for name, v in row["retrievers"].items()
    }
    return Receipt.model_validate({**row, "retrievers": retrievers, "principal": principal})


async def get(conn: Conn, tenant_id: str, receipt_id: uuid.UUID) -> Receipt | None:
    row = await (await conn.execute(SELECT, [tenant_id, receipt_id])).fetchone()
    return _receipt(row) if row else None


async def for_memory(
    conn: Conn,
    tenant_id: str,
    memory_id: uuid.UUID,
    limit: int = 50,
    *,
    only_user: bool = False,
    user: str | None = None,
) -> list[Receipt]:
    """The receipts whose selection included this memory: "why was this used". With ``only_user``, only
    the recalls that acted as ``user`` (None: as no user)."""
    params = {"tenant_id": tenant_id, "ids": [memory_id], "limit": limit, "only_user": only_user, "user": user}
    rows = await (await conn.execute(FOR_MEMORY, params)).fetchall()
    return [_receipt(r) for r in rows]
