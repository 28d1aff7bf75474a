"""Duplicates of new memories among the stored ones (SPEC 4.5), and merging into them (inside
``Database.tenant``). A duplicate shares the new memory's scope (user, agent, workflow), kind and visibility,
is active and holds no fact (a fact's repeats are replays or supersessions)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

import numpy as np
from psycopg.types.json import Jsonb

from engram.model import Memory
from engram.store.database import Conn
from engram.store.memories import MEMORY_COLUMNS

# Writers of one scope, kind and visibility take this lock before they look for duplicates, so that two of
# them cannot both insert the same memory.
SCOPE_LOCK: LiteralString = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))"

EXACT: LiteralString = (
    "SELECT " + MEMORY_COLUMNS + ", scope_key FROM memories"
    " WHERE tenant_id = %s AND content_hash = ANY(%s) AND status = 'active' AND fact_key IS NULL"
)
# Near duplicates are looked for among the most recent NEAR_WINDOW memories of the scope and kind
# (memories_dedup_scope): repeats come close together, and a write must not cost a scan of a large scope.
NEAR_WINDOW = 1000
NEAR: LiteralString = """
SELECT x.ord, best.id, best.similarity, best.content
  FROM unnest(%(ords)s::int[], %(scopes)s::text[], %(kinds)s::text[], %(visibilities)s::text[], %(vectors)s::text[])
       AS x(ord, scope, kind, visibility, vt)
 CROSS JOIN LATERAL (SELECT x.vt::vector AS v) q
 CROSS JOIN LATERAL (
       SELECT r.id, r.content, 1 - (e.embedding <=> q.v) AS similarity
         FROM (SELECT m.id, m.content FROM memories m
                WHERE m.tenant_id = %(tenant_id)s AND m.scope_key = x.scope AND m.kind = x.kind
                  AND m.visibility = x.visibility AND m.status = 'active' AND m.fact_key IS NULL
                ORDER BY m.id DESC LIMIT %(window)s) r
         JOIN memory_embeddings e ON e.tenant_id = %(tenant_id)s AND e.memory_id = r.id AND e.model_id = %(model)s
        ORDER BY e.embedding <=> q.v LIMIT 1) best
 WHERE best.similarity >= %(threshold)s
"""
MERGE: LiteralString = (
    "UPDATE memories SET confidence = GREATEST(confidence, %(confidence)s),"
    " importance = GREATEST(importance, %(importance)s),"
    " tags = (tags || ARRAY(SELECT t FROM unnest(%(tags)s::text[]) AS t WHERE t <> ALL(tags)))[1:64],"
    " sources = CASE WHEN jsonb_array_length(sources) < 100 THEN sources || %(source)s::jsonb ELSE sources END,"
    " revision = revision + 1, updated_at = now()"
    " WHERE tenant_id = %(tenant_id)s AND id = %(id)s RETURNING " + MEMORY_COLUMNS
)


@dataclass(frozen=True)
class Probe:
    """A new memory looked for among the stored ones."""

    ord: int
    scope: str
    kind: str
    visibility: str
    content_hash: str
    vector: np.ndarray[Any, np.dtype[np.float32]] | None


def scope_lock_key(tenant_id: str, p: Probe) -> str:
    return f"dedup\x1f{tenant_id}\x1f{p.scope}\x1f{p.kind}\x1f{p.visibility}"


async def lock(conn: Conn, tenant_id: str, probes: Sequence[Probe]) -> None:
    """Take the scope locks of these probes, in one order so that two batches cannot deadlock."""
    for key in sorted({scope_lock_key(tenant_id, p) for p in probes}):
        await conn.execute(SCOPE_LOCK, [key])


async def exact(conn: Conn, tenant_id: str, probes: Sequence[Probe]) -> dict[int, Memory]:
    """Stored memories with a probe's very content, in its scope, kind and visibility."""
    rows = await (await conn.execute(EXACT, [tenant_id, sorted({p.content_hash for p in probes})])).fetchall()
    by_key: dict[tuple[str, str, str, str], Memory] = {}
    for row in rows:
        scope = row.pop("scope_key")
        mem = Memory.from_row(row)
        by_key.setdefault((scope, mem.kind, mem.visibility, mem.content_hash), mem)
    found = {}
    for p in probes:
        hit = by_key.get((p.scope, p.kind, p.visibility, p.content_hash))
        if hit is not None:
            found[p.ord] = hit
    return found


async def near(
    conn: Conn, tenant_id: str, model: str, probes: Sequence[Probe], threshold: float
) -> dict[int, tuple[uuid.UUID, float, str]]:
    """For each probe with a vector, the most similar stored memory at or above ``threshold`` (cosine):
    its id, the similarity and its content."""
    todo = [p for p in probes if p.vector is not None]
    if not todo:
        return {}
    params = {
        "ords": [p.ord for p in todo], "scopes": [p.scope for p in todo], "kinds": [p.kind for p in todo],
        "visibilities": [p.visibility for p in todo],
        "vectors": [_text(p.vector) for p in todo if p.vector is not None],
        "tenant_id": tenant_id, "model": model, "threshold": threshold, "window": NEAR_WINDOW,
    }  # fmt: skip
    rows = await (await conn.execute(NEAR, params)).fetchall()
    return {r["ord"]: (r["id"], float(r["similarity"]), r["content"]) for r in rows}


def _text(vector: np.ndarray[Any, np.dtype[np.float32]]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


async def merge(
    conn: Conn, tenant_id: str, mem_id: uuid.UUID, *, confidence: float, importance: float, tags: list[str],
    source: dict[str, Any],
) -> Memory | None:  # fmt: skip
    """Fold a new memory into a stored one: its source appended, confidence and importance the higher of
    the two, tags joined; a new revision."""
    params = {
        "tenant_id": tenant_id, "id": mem_id, "confidence": confidence, "importance": importance, "tags": tags,
        "source": Jsonb([source]),
    }  # fmt: skip
    row = await (await conn.execute(MERGE, params)).fetchone()
    return Memory.from_row(row) if row else None
