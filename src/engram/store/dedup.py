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
# Near duplicates are looked for among the most recent NEAR_WINDOW memories of the scope, kind and visibility
# (memories_dedup_scope): repeats come close together, and a write must not cost a scan of a large scope.
# One new memory is compared in the database; a batch reads each group's window once (binary) into numpy.
# Each vector is looked up by memory and content hash: then either index of memory_embeddings finds it in one
# step, whichever the planner picks on a table whose statistics lag behind its growth (a vector of older
# content is stale and not compared).
NEAR_WINDOW = 200
WINDOWS: LiteralString = """
SELECT g.n, r.id, e.embedding
  FROM unnest(%(scopes)s::text[], %(kinds)s::text[], %(visibilities)s::text[])
       WITH ORDINALITY AS g(scope, kind, visibility, n)
 CROSS JOIN LATERAL (
       SELECT m.id, m.content_hash FROM memories m
        WHERE m.tenant_id = %(tenant_id)s AND m.scope_key = g.scope AND m.kind = g.kind
          AND m.visibility = g.visibility AND m.status = 'active' AND m.fact_key IS NULL
        ORDER BY m.id DESC LIMIT %(window)s) r
 CROSS JOIN LATERAL (
       SELECT e.embedding FROM memory_embeddings e
        WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = r.id AND e.model_id = %(model)s
          AND e.content_hash = r.content_hash LIMIT 1) e
"""
# One new memory of a group: the database ranks its window, and only the best match crosses the wire.
NEAREST: LiteralString = """
SELECT r.id, 1 - (e.embedding <=> %(vector)s) AS similarity
  FROM (SELECT m.id, m.content_hash FROM memories m
         WHERE m.tenant_id = %(tenant_id)s AND m.scope_key = %(scope)s AND m.kind = %(kind)s
           AND m.visibility = %(visibility)s AND m.status = 'active' AND m.fact_key IS NULL
         ORDER BY m.id DESC LIMIT %(window)s) r
 CROSS JOIN LATERAL (
       SELECT e.embedding FROM memory_embeddings e
        WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = r.id AND e.model_id = %(model)s
          AND e.content_hash = r.content_hash LIMIT 1) e
 ORDER BY e.embedding <=> %(vector)s LIMIT 1
"""
CONTENTS: LiteralString = "SELECT id, content FROM memories WHERE tenant_id = %s AND id = ANY(%s)"
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
    """For each probe with a vector, the most similar stored memory of its group at or above ``threshold``
    (cosine): its id, the similarity and its content."""
    todo = [p for p in probes if p.vector is not None]
    groups = sorted({(p.scope, p.kind, p.visibility) for p in todo})
    if not groups:
        return {}
    if len(todo) == 1:
        best = await _nearest(conn, tenant_id, model, todo[0], threshold)
    else:
        best = await _windows(conn, tenant_id, model, todo, groups, threshold)
    if not best:
        return {}
    contents = await (await conn.execute(CONTENTS, [tenant_id, list({mid for mid, _ in best.values()})])).fetchall()
    text = {r["id"]: r["content"] for r in contents}
    return {o: (mid, sim, text[mid]) for o, (mid, sim) in best.items()}


async def _nearest(
    conn: Conn, tenant_id: str, model: str, p: Probe, threshold: float
) -> dict[int, tuple[uuid.UUID, float]]:
    params = {
        "vector": p.vector, "tenant_id": tenant_id, "scope": p.scope, "kind": p.kind, "visibility": p.visibility,
        "model": model, "window": NEAR_WINDOW,
    }  # fmt: skip
    row = await (await conn.execute(NEAREST, params)).fetchone()
    if row is None or row["similarity"] < threshold:
        return {}
    return {p.ord: (row["id"], float(row["similarity"]))}


async def _windows(
    conn: Conn, tenant_id: str, model: str, todo: list[Probe], groups: list[tuple[str, str, str]], threshold: float
) -> dict[int, tuple[uuid.UUID, float]]:
    """Many new memories: each group's window read once (binary) and compared in numpy."""
    params = {
        "scopes": [g[0] for g in groups], "kinds": [g[1] for g in groups], "visibilities": [g[2] for g in groups],
        "tenant_id": tenant_id, "model": model, "window": NEAR_WINDOW,
    }  # fmt: skip
    rows = await (await conn.execute(WINDOWS, params, binary=True)).fetchall()
    windows: dict[tuple[str, str, str], tuple[list[uuid.UUID], list[Any]]] = {}
    for r in rows:
        ids, vectors = windows.setdefault(groups[r["n"] - 1], ([], []))
        ids.append(r["id"])
        vectors.append(r["embedding"].to_numpy())
    best: dict[int, tuple[uuid.UUID, float]] = {}
    for group, (ids, vectors) in windows.items():
        members = [p for p in todo if (p.scope, p.kind, p.visibility) == group and p.vector is not None]
        matrix = np.stack(vectors).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
        queries = np.stack([p.vector for p in members if p.vector is not None]).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True) + 1e-12
        sims = queries @ matrix.T
        tops = sims.argmax(axis=1)
        for p, top, row in zip(members, tops, sims, strict=True):
            if row[top] >= threshold:
                best[p.ord] = (ids[int(top)], float(row[top]))
    return best


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
