"""Vectors per memory and embedding model, the per-model HNSW index, and the enrichment job queue."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any, LiteralString

import numpy as np
from psycopg import AsyncConnection, sql
from psycopg.rows import DictRow

from engram.store.database import Conn

REGISTER_MODEL: LiteralString = """
INSERT INTO embedding_models (model_id, dimensions, index_name) VALUES (%s, %s, %s)
ON CONFLICT (model_id) DO NOTHING
"""
MODEL_DIMENSIONS: LiteralString = "SELECT dimensions FROM embedding_models WHERE model_id = %s"

VECTORS_BY_HASH: LiteralString = """
SELECT DISTINCT ON (content_hash) content_hash, embedding FROM memory_embeddings
 WHERE tenant_id = %s AND model_id = %s AND content_hash = ANY(%s)
"""

UPSERT_VECTOR: LiteralString = """
INSERT INTO memory_embeddings (tenant_id, memory_id, model_id, content_hash, embedding)
VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (tenant_id, memory_id, model_id)
DO UPDATE SET content_hash = excluded.content_hash, embedding = excluded.embedding, created_at = now()
"""

# Only store a vector if the memory still has the content it was computed from.
UPSERT_VECTOR_IF_CURRENT: LiteralString = """
INSERT INTO memory_embeddings (tenant_id, memory_id, model_id, content_hash, embedding)
SELECT m.tenant_id, m.id, %(model_id)s, m.content_hash, %(embedding)s FROM memories m
 WHERE m.tenant_id = %(tenant_id)s AND m.id = %(memory_id)s AND m.content_hash = %(content_hash)s
ON CONFLICT (tenant_id, memory_id, model_id)
DO UPDATE SET content_hash = excluded.content_hash, embedding = excluded.embedding, created_at = now()
RETURNING memory_id
"""

ENQUEUE: LiteralString = """
INSERT INTO embedding_jobs (tenant_id, memory_id, model_id, last_error)
SELECT %s, unnest(%s::uuid[]), %s, %s
ON CONFLICT (tenant_id, memory_id, model_id)
DO UPDATE SET not_before = now(), attempts = 0, last_error = excluded.last_error
"""
DROP_VECTORS: LiteralString = "DELETE FROM memory_embeddings WHERE tenant_id = %s AND memory_id = %s"
# Lease due jobs of one model across tenants (inside ``Database.queue``), round robin: the first job of every
# tenant with due jobs (oldest first), then the second of each, and so on until the batch is full, so one
# tenant's backlog never holds back another's writes. Chosen first, then locked (SKIP LOCKED: a job another
# worker leases meanwhile is left to it). A leased job is due again when its lease ends.
CLAIM: LiteralString = """
WITH due AS (
    SELECT tenant_id, min(not_before) AS oldest FROM embedding_jobs
     WHERE model_id = %(model_id)s AND not_before <= now()
     GROUP BY tenant_id ORDER BY oldest LIMIT %(limit)s
), ranked AS (
    SELECT x.tenant_id, x.memory_id
      FROM due d
     CROSS JOIN LATERAL (SELECT j.tenant_id, j.memory_id, row_number() OVER (ORDER BY j.not_before) AS rn
                           FROM embedding_jobs j
                          WHERE j.model_id = %(model_id)s AND j.tenant_id = d.tenant_id AND j.not_before <= now()
                          ORDER BY j.not_before LIMIT %(limit)s) x
     ORDER BY x.rn, d.oldest
     LIMIT %(limit)s
), locked AS (
    SELECT j.tenant_id, j.memory_id
      FROM embedding_jobs j JOIN ranked r ON r.tenant_id = j.tenant_id AND r.memory_id = j.memory_id
     WHERE j.model_id = %(model_id)s AND j.not_before <= now()
       FOR UPDATE OF j SKIP LOCKED
)
UPDATE embedding_jobs j
   SET attempts = j.attempts + 1, not_before = now() + make_interval(secs => %(lease)s)
  FROM locked l
 WHERE j.tenant_id = l.tenant_id AND j.memory_id = l.memory_id AND j.model_id = %(model_id)s
RETURNING j.tenant_id, j.memory_id
"""
JOB_ITEMS: LiteralString = """
SELECT m.id, m.content, m.content_hash, m.session_id FROM embedding_jobs j
  JOIN memories m ON m.tenant_id = j.tenant_id AND m.id = j.memory_id
 WHERE j.tenant_id = %s AND j.model_id = %s AND j.memory_id = ANY(%s)
"""
COMPLETE: LiteralString = "DELETE FROM embedding_jobs WHERE tenant_id = %s AND model_id = %s AND memory_id = ANY(%s)"
FAIL: LiteralString = """
UPDATE embedding_jobs
   SET last_error = %s, not_before = now() + make_interval(secs => least(300, power(2, attempts)))
 WHERE tenant_id = %s AND model_id = %s AND memory_id = ANY(%s)
"""
REFRESH_SESSIONS: LiteralString = "SELECT engram_refresh_sessions(%s, %s, %s, %s, %s)"
BACKLOG: LiteralString = "SELECT count(*) AS n FROM embedding_jobs"  # inside ``Database.queue``


def index_name(model_id: str) -> str:
    return "memory_embeddings_hnsw_" + hashlib.sha256(model_id.encode()).hexdigest()[:16]


async def register_model(conn: AsyncConnection[DictRow], model_id: str, dimensions: int) -> None:
    """Record the model and build its HNSW cosine indexes (owner connection; idempotent).

    The shared index grows one insert at a time on the write path, where every insert pays for it, so it
    is built lean (m 8, ef_construction 16: 0.23 ms per insert instead of about 0.55): small tenants are
    searched exactly anyway (the planner prefers their primary-key rows) and large ones get a dense index
    of their own (``index_large_tenants``), so the shared graph only bridges a tenant's growth."""
    name = index_name(model_id)
    await conn.execute(REGISTER_MODEL, [model_id, dimensions, name])
    row = await (await conn.execute(MODEL_DIMENSIONS, [model_id])).fetchone()
    assert row is not None
    if int(row["dimensions"]) != dimensions:
        from engram.errors import ValidationError

        raise ValidationError(
            f"embedding model {model_id!r} is registered with {row['dimensions']} dimensions, the embedder "
            f"returns {dimensions}; give the new model a new id so it can be built beside the old one",
            field="embedding_model",
        )
    for column, suffix in (("embedding", ""), ("context_embedding", "_ctx")):
        await conn.execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {} ON memory_embeddings USING hnsw (({}::vector({})) vector_cosine_ops)"
                " WITH (m = 8, ef_construction = 16) WHERE model_id = {}"
            ).format(
                sql.Identifier(name + suffix), sql.Identifier(column), sql.Literal(dimensions), sql.Literal(model_id)
            )
        )


TENANT_INDEX_THRESHOLD = 500  # recall searches smaller tenants exactly (at most about 1 ms)

# A tenant whose memories are nearly all owned by its users (``memories.scope_owner``) needs no graph of its
# own: every recall there reads one user's scope, exactly or through that owner's index
# (``scope_indexes``). Only the shared memories make a tenant-wide scope large.
LARGE_TENANTS: LiteralString = """
SELECT tenant_id, count(*) AS n FROM memory_embeddings WHERE model_id = %(model)s
 GROUP BY tenant_id
HAVING count(*) >= %(threshold)s AND count(*) FILTER (WHERE scope_owner IS NULL) >= %(threshold)s
 ORDER BY count(*) DESC
"""
EXISTING_INDEXES: LiteralString = "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_embeddings'"


# A tenant's own graph (``index_large_tenants``). Built in bulk, it can afford to be dense: on the recall
# bench's near-duplicate texts (20,000 memories from eight templates), the filtered recall@10 of builds at
# m 24 / ef_construction 200 ranged 0.95-0.985 from build to build (HNSW draws its layers at random; a
# query whose beam settles in the wrong cluster of near-duplicates finds none of its top 10), and at
# m 32 / ef_construction 400 0.987-0.997 at the same ef_search, for 0.2 ms more a search and twice the
# build time (10 s for those 20,000 on two cores).
TENANT_INDEX_M = 32
TENANT_INDEX_EF_CONSTRUCTION = 400
# Enough for the graph of a tenant of about half a million vectors to be built in memory (pgvector builds
# on disk, far slower, once the graph outgrows maintenance_work_mem); PostgreSQL takes it only as needed.
INDEX_BUILD_MEMORY_KB = 1024 * 1024
_LAYOUT = "_h32"  # the layout of a tenant index; earlier ones are replaced (``_EARLIER``)
TENANT_INDEX_LAYOUT = _LAYOUT
_PREVIOUS = "_hip"  # m 24, halfvec inner product: recall's order, so it serves until replaced
_EARLIER = (_PREVIOUS, "_ip", "")  # and full-vector inner product, cosine


def tenant_index_name(model_id: str, tenant_id: str, *, context: bool = False, layout: str = _LAYOUT) -> str:
    """The name of a tenant's own HNSW index (inner-product operator class, see ``index_large_tenants``)."""
    base = index_name(model_id) + "_t" + hashlib.sha256(tenant_id.encode()).hexdigest()[:12]
    return base + ("_ctx" if context else "") + layout


def own_index_names(model_id: str, tenant_id: str) -> list[str]:
    """The names under which a tenant's own index serves recall's halfvec inner-product order: the current
    layout's, and the previous one's (the same order, a sparser graph) until the current one replaces it."""
    return [tenant_index_name(model_id, tenant_id, layout=layout) for layout in (_LAYOUT, _PREVIOUS)]


# This session's maintenance_work_mem raised to at least INDEX_BUILD_MEMORY_KB (never lowered).
RAISE_BUILD_MEMORY: LiteralString = """
SELECT set_config('maintenance_work_mem',
                  greatest(pg_size_bytes(current_setting('maintenance_work_mem')) / 1024, %s) || 'kB', false)
"""


async def index_large_tenants(
    conn: AsyncConnection[DictRow], model_id: str, dimensions: int, threshold: int = TENANT_INDEX_THRESHOLD
) -> list[str]:
    """Give every tenant with at least ``threshold`` vectors its own partial HNSW index (owner connection in
    autocommit mode; built CONCURRENTLY, so writes go on). Filtering a shared graph down to one tenant wastes
    most of a search once the tenant is a large share of a large table; its own graph wastes nothing.
    Built in bulk, it can afford a dense graph (``TENANT_INDEX_M``, ``TENANT_INDEX_EF_CONSTRUCTION``) where
    the shared index, which grows one insert at a time, is lean: on near-duplicate texts that lifts filtered
    recall@10 from about 0.83 to 0.99.

    The tenant's index holds half-precision copies (``halfvec``: half the pages to visit, the same top 10 at
    this dimension) under the inner-product operator class, while the shared one uses cosine on full
    vectors: vectors are stored at unit length, so both orders are the same, and a query ordered by
    halfvec inner product can only be served by the tenant's own index. Otherwise the planner may cost the
    lean shared graph cheaper for small LIMITs and pick it, with worse recall. Scores are computed from
    the full vectors. Indexes of earlier layouts are dropped once the new ones exist. Returns the tenants
    indexed now."""
    existing = {r["indexname"] for r in await (await conn.execute(EXISTING_INDEXES)).fetchall()}
    done = []
    # A session setting: the connection is this pass's own.
    await conn.execute(RAISE_BUILD_MEMORY, [INDEX_BUILD_MEMORY_KB])
    for row in await (await conn.execute(LARGE_TENANTS, {"model": model_id, "threshold": threshold})).fetchall():
        tenant_id = row["tenant_id"]
        for column, context in (("embedding", False), ("context_embedding", True)):
            name = tenant_index_name(model_id, tenant_id, context=context)
            if name not in existing:
                await conn.execute(
                    sql.SQL(
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON memory_embeddings"
                        " USING hnsw (({}::halfvec({})) halfvec_ip_ops) WITH (m = {}, ef_construction = {})"
                        " WHERE model_id = {} AND tenant_id = {}"
                    ).format(
                        sql.Identifier(name), sql.Identifier(column), sql.Literal(dimensions),
                        sql.Literal(TENANT_INDEX_M), sql.Literal(TENANT_INDEX_EF_CONSTRUCTION),
                        sql.Literal(model_id), sql.Literal(tenant_id),
                    )
                )  # fmt: skip
                done.append(tenant_id)
            for layout in _EARLIER:
                legacy = tenant_index_name(model_id, tenant_id, context=context, layout=layout)
                if legacy in existing:
                    await conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(legacy)))
    return sorted(set(done))


async def vectors_by_hash(
    conn: Conn, tenant_id: str, model_id: str, hashes: Sequence[str]
) -> dict[str, np.ndarray[Any, Any]]:
    """Vectors already computed for this content in this tenant: identical content is never embedded twice."""
    if not hashes:
        return {}
    rows = await (await conn.execute(VECTORS_BY_HASH, [tenant_id, model_id, list(hashes)])).fetchall()
    return {r["content_hash"]: r["embedding"].to_numpy() for r in rows}


async def store_vectors(
    conn: Conn, tenant_id: str, model_id: str, rows: Sequence[tuple[uuid.UUID, str, np.ndarray[Any, Any]]]
) -> None:
    if rows:
        async with conn.cursor() as cur:
            await cur.executemany(UPSERT_VECTOR, [(tenant_id, mid, model_id, h, vec) for mid, h, vec in rows])


async def enqueue(conn: Conn, tenant_id: str, model_id: str, ids: Sequence[uuid.UUID], reason: str) -> None:
    if ids:
        await conn.execute(ENQUEUE, [tenant_id, list(ids), model_id, reason])


EMBEDDED_IDS: LiteralString = """
SELECT memory_id FROM memory_embeddings WHERE tenant_id = %s AND model_id = %s AND memory_id = ANY(%s)
"""


async def embedded_ids(conn: Conn, tenant_id: str, model_id: str, ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these memories have a vector of this model."""
    if not ids:
        return set()
    rows = await (await conn.execute(EMBEDDED_IDS, [tenant_id, model_id, list(ids)])).fetchall()
    return {r["memory_id"] for r in rows}
