"""Consolidation's reads (SPEC 6.4): the active episodes of one tenant and agent with their vectors, the
lock that keeps two consolidations of them apart, and the evidence links a fact already has."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, LiteralString

from engram.store.database import Conn

# One consolidation per tenant and agent at a time; the other returns at once (it would find the same groups).
TRY_LOCK: LiteralString = "SELECT pg_try_advisory_xact_lock(hashtextextended('engram.consolidate:' || %s, 0)) AS got"
EPISODES: LiteralString = """
SELECT m.id, m.user_id, m.workflow_id, m.visibility, m.content, m.recorded_at, e.embedding,
       1 + jsonb_array_length(m.sources) AS mentions
  FROM memories m
  LEFT JOIN memory_embeddings e ON e.tenant_id = m.tenant_id AND e.memory_id = m.id AND e.model_id = %(model)s
 WHERE m.tenant_id = %(tenant_id)s AND m.agent_key = %(agent_key)s AND m.kind = 'episodic' AND m.status = 'active'
   AND (m.expires_at IS NULL OR m.expires_at > now()) AND m.allow_in_prompt
 ORDER BY m.recorded_at DESC, m.id DESC
 LIMIT %(limit)s
"""
AGENTS: LiteralString = """
SELECT DISTINCT agent_key FROM memories WHERE tenant_id = %s AND kind = 'episodic' AND status = 'active'
"""
LINKED: LiteralString = """
SELECT dst_id FROM relations WHERE tenant_id = %s AND src_id = %s AND type = 'derived_from' AND dst_id = ANY(%s)
"""


async def try_lock(conn: Conn, tenant_id: str, agent_id: str | None) -> bool:
    row = await (await conn.execute(TRY_LOCK, [f"{tenant_id}\x1f{agent_id or ''}"])).fetchone()
    return bool(row and row["got"])


async def episodes(
    conn: Conn, tenant_id: str, agent_id: str | None, model_id: str | None, limit: int
) -> list[dict[str, Any]]:
    params = {"tenant_id": tenant_id, "agent_key": agent_id or "", "model": model_id, "limit": limit}
    return list(await (await conn.execute(EPISODES, params)).fetchall())


async def linked(conn: Conn, tenant_id: str, fact_id: uuid.UUID, evidence: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    rows = await (await conn.execute(LINKED, [tenant_id, fact_id, list(evidence)])).fetchall()
    return {r["dst_id"] for r in rows}


async def agents(conn: Conn, tenant_id: str) -> list[str | None]:
    """The agents with active episodes (None: written without one)."""
    rows = await (await conn.execute(AGENTS, [tenant_id])).fetchall()
    return sorted((r["agent_key"] or None for r in rows), key=lambda a: a or "")
