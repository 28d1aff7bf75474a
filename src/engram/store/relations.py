"""Typed, weighted edges between memories of a tenant (SPEC 8)."""

from __future__ import annotations

from typing import LiteralString

from psycopg.types.json import Jsonb

from engram.model import new_id
from engram.model.recall import Relation, RelationInput
from engram.store.database import Conn

UPSERT_RELATION: LiteralString = """
INSERT INTO relations (tenant_id, id, src_id, dst_id, type, weight, metadata) VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (tenant_id, src_id, dst_id, type) DO UPDATE SET weight = excluded.weight, metadata = excluded.metadata
RETURNING id, src_id, dst_id, type, weight, metadata, created_at
"""


async def upsert(conn: Conn, tenant_id: str, rel: RelationInput) -> Relation:
    """Add the edge, or re-weight it (one per src, dst and type)."""
    params = [tenant_id, new_id(), rel.src_id, rel.dst_id, rel.type, rel.weight, Jsonb(rel.metadata)]
    row = await (await conn.execute(UPSERT_RELATION, params)).fetchone()
    assert row is not None
    return Relation.model_validate(row)
