"""Partial HNSW indexes of large scopes (``retrieval.scope``): one per owner (``memories.scope_owner``) with
at least ``SCOPE_INDEX_THRESHOLD`` vectors, as a large tenant has one of its own
(``embeddings.index_large_tenants``). A user holding 16,000 of a tenant's million memories is 1.6% of the
tenant's graph: a filtered walk of that graph visits some sixty vectors for each one it keeps, and gives up
at pgvector's scan limit. Its own graph visits only its own.

Every statement on memory_embeddings is planned against all of its indexes, and a tenant with many large
owners has many: the owner is named in each index's predicate as ``(scope_owner = '...') IS TRUE``, which
the planner sets aside at once for another owner's statement, where a plain equality is refuted by
evaluating the two constants, index by index (docs/retrieval.md, "Large owners"). Each owner's statement
is planned on every pooled connection it runs on."""

from __future__ import annotations

import hashlib
from typing import LiteralString

from psycopg import AsyncConnection, sql
from psycopg.rows import DictRow

from engram.store import embeddings as emb

SCOPE_INDEX_THRESHOLD = 2000  # smaller scopes are read exactly (``retrieval.scope.EXACT_LIMIT``)

# Owners over the threshold, and how many of their vectors have a context vector: an owner with none gets
# no context index (each index on the table, an empty one too, is weighed by every plan on it).
LARGE_OWNERS: LiteralString = """
SELECT tenant_id, scope_owner, count(*) AS n, count(context_embedding) AS n_context FROM memory_embeddings
 WHERE model_id = %s AND scope_owner IS NOT NULL
 GROUP BY tenant_id, scope_owner HAVING count(*) >= %s ORDER BY count(*) DESC
"""
# The layout of an owner's index ("_s": the owner in an IS TRUE predicate); migration 0025 dropped the
# earlier ones ("_o": a plain equality).
_OWNER_LAYOUT = "_s"


def owner_index_name(model_id: str, tenant_id: str, owner: str, *, context: bool = False) -> str:
    """The name of an owner's HNSW index in a tenant (the same graph as a tenant's own index)."""
    digest = hashlib.sha256(f"{tenant_id}\x1f{owner}".encode()).hexdigest()[:12]
    return emb.index_name(model_id) + _OWNER_LAYOUT + digest + ("_ctx" if context else "") + emb.TENANT_INDEX_LAYOUT


async def index_large_owners(
    conn: AsyncConnection[DictRow], model_id: str, dimensions: int, threshold: int = SCOPE_INDEX_THRESHOLD
) -> list[str]:
    """Give every owner with at least ``threshold`` vectors its own partial HNSW index, and one of its
    context vectors if it has any (owner connection in autocommit mode; built CONCURRENTLY). The same
    operator class and graph as a tenant's own index: recall orders an owner's part of a scope by halfvec
    inner product, which only these indexes serve. Returns the tenants with an owner indexed now."""
    existing = {r["indexname"] for r in await (await conn.execute(emb.EXISTING_INDEXES)).fetchall()}
    await conn.execute(emb.RAISE_BUILD_MEMORY, [emb.INDEX_BUILD_MEMORY_KB])
    done = []
    for row in await (await conn.execute(LARGE_OWNERS, [model_id, threshold])).fetchall():
        tenant_id, owner = row["tenant_id"], row["scope_owner"]
        for column, context in (("embedding", False), ("context_embedding", True)):
            name = owner_index_name(model_id, tenant_id, owner, context=context)
            if name in existing or (context and not row["n_context"]):
                continue
            await conn.execute(
                sql.SQL(
                    "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON memory_embeddings"
                    " USING hnsw (({}::halfvec({})) halfvec_ip_ops) WITH (m = {}, ef_construction = {})"
                    " WHERE model_id = {} AND tenant_id = {} AND (scope_owner = {}) IS TRUE"
                ).format(
                    sql.Identifier(name), sql.Identifier(column), sql.Literal(dimensions),
                    sql.Literal(emb.TENANT_INDEX_M), sql.Literal(emb.TENANT_INDEX_EF_CONSTRUCTION),
                    sql.Literal(model_id), sql.Literal(tenant_id), sql.Literal(owner),
                )
            )  # fmt: skip
            done.append(tenant_id)
    return sorted(set(done))
