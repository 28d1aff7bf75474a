"""Loading many synthetic memories at once, for benchmarks only (`engram bench scale`): rows straight into
``memories`` and ``memory_embeddings`` in large statements, under the tenant's row-level security.

It bypasses the write path on purpose (admission, near-duplicate search, revisions, audit, outbox): a
million-memory curve should measure recall, and the write path runs at a few hundred to a thousand
memories a second on two cores. The triggers still run (search keys, postings, the vectors' copy of
visibility), so recall sees these rows exactly as it sees written ones. Never use it for real data.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, LiteralString

import numpy as np

from engram.store.database import Conn

INSERT_MEMORIES: LiteralString = """
INSERT INTO memories (tenant_id, id, user_id, kind, content, content_hash, source_type)
SELECT %(tenant_id)s, x.id, x.user_id, 'episodic', x.content, x.content_hash, 'user_message'
  FROM unnest(%(ids)s::uuid[], %(users)s::text[], %(contents)s::text[], %(hashes)s::text[])
       AS x(id, user_id, content, content_hash)
"""
INSERT_VECTORS: LiteralString = """
INSERT INTO memory_embeddings (tenant_id, memory_id, model_id, content_hash, embedding)
SELECT %(tenant_id)s, x.id, %(model_id)s, x.content_hash, x.embedding
  FROM unnest(%(ids)s::uuid[], %(hashes)s::text[], %(vectors)s::vector[]) AS x(id, content_hash, embedding)
"""


async def load(
    conn: Conn,
    tenant_id: str,
    model_id: str,
    *,
    ids: Sequence[uuid.UUID],
    users: Sequence[str | None],
    contents: Sequence[str],
    hashes: Sequence[str],
    vectors: np.ndarray[Any, Any],
) -> None:
    """Insert these memories and their vectors (one transaction, the caller's): contents already
    normalised, ``hashes`` their ``model.text.content_hash``."""
    params = {"tenant_id": tenant_id, "ids": list(ids), "users": list(users), "contents": list(contents),
              "hashes": list(hashes)}  # fmt: skip
    await conn.execute(INSERT_MEMORIES, params)
    rows = [np.asarray(v, dtype=np.float32) for v in vectors]  # pgvector's adapter sends them in binary
    await conn.execute(INSERT_VECTORS, {**params, "model_id": model_id, "vectors": rows}, binary=True)
