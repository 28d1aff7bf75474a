"""Supersession chains (SPEC 4.4): the current memory of a fact, what a deletion leaves behind, and
archiving undone.

A deleted memory's place in its chain is taken by its predecessor: if the deleted one had been superseded,
the predecessor now points at its successor; if it was the current one, the predecessor becomes current
again (with the status the deleted one had, and the validity it had before it was superseded). No
``superseded_by`` ever points at nothing.
"""

from __future__ import annotations

import uuid
from typing import Any, LiteralString

from engram.store.database import Conn
from engram.store.memories import MEMORY_COLUMNS

# The end of the chain a memory belongs to (bounded: a chain is a fact's history, not a list).
HEAD: LiteralString = """
WITH RECURSIVE chain AS (
    SELECT id, superseded_by, status, 0 AS depth FROM memories WHERE tenant_id = %(tenant_id)s AND id = %(id)s
    UNION ALL
    SELECT m.id, m.superseded_by, m.status, c.depth + 1
      FROM chain c JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = c.superseded_by
     WHERE c.depth < 1000
)
SELECT id, status FROM chain ORDER BY depth DESC LIMIT 1
"""

TOMBSTONE: LiteralString = """
SELECT details FROM audit_events
 WHERE tenant_id = %s AND memory_id = %s AND action = 'memory.deleted' ORDER BY at DESC LIMIT 1
"""

DELETE: LiteralString = """
DELETE FROM memories WHERE tenant_id = %s AND id = %s
RETURNING id, kind, revision, status, user_id, agent_id, workflow_id, visibility, session_id, superseded_by, fact_key
"""

REPOINT: LiteralString = """
UPDATE memories SET superseded_by = %(successor)s, revision = revision + 1, updated_at = now()
 WHERE tenant_id = %(tenant_id)s AND superseded_by = %(gone)s
RETURNING id
"""

# The predecessor takes the deleted head's place: its status, and the validity it had before it was
# superseded (from the snapshot of the revision before its last supersession).
RESTORE: LiteralString = """
UPDATE memories p
   SET status = %(status)s, superseded_by = NULL, revision = p.revision + 1, updated_at = now(),
       archived_at = CASE WHEN %(status)s = 'archived' THEN now() END,
       valid_until = (
           SELECT (r.snapshot ->> 'valid_until')::timestamptz FROM memory_revisions r
            WHERE r.tenant_id = p.tenant_id AND r.memory_id = p.id
              AND r.revision = (SELECT max(s.revision) - 1 FROM memory_revisions s
                                 WHERE s.tenant_id = p.tenant_id AND s.memory_id = p.id AND s.change = 'superseded'))
 WHERE p.tenant_id = %(tenant_id)s AND p.superseded_by = %(gone)s
RETURNING p.id
"""

# Back to what it was: superseded if something superseded it (archiving does not unlink it), else active.
UNARCHIVE: LiteralString = (
    "UPDATE memories SET status = CASE WHEN superseded_by IS NULL THEN 'active' ELSE 'superseded' END,"
    " archived_at = NULL, revision = revision + 1, updated_at = now()"
    " WHERE tenant_id = %s AND id = %s RETURNING " + MEMORY_COLUMNS
)

ACTIVE_FACT: LiteralString = """
SELECT id FROM memories
 WHERE tenant_id = %s AND scope_key = %s AND fact_key = %s AND status = 'active' AND id <> %s FOR UPDATE
"""


async def head(conn: Conn, tenant_id: str, mem_id: uuid.UUID) -> uuid.UUID:
    """The memory at the end of ``mem_id``'s chain (itself when nothing superseded it)."""
    row = await (await conn.execute(HEAD, {"tenant_id": tenant_id, "id": mem_id})).fetchone()
    return row["id"] if row else mem_id


async def tombstone(conn: Conn, tenant_id: str, mem_id: uuid.UUID) -> dict[str, Any] | None:
    """The audit details left by the memory's deletion, or None if it was never deleted."""
    row = await (await conn.execute(TOMBSTONE, [tenant_id, mem_id])).fetchone()
    return dict(row["details"]) if row else None


async def delete(conn: Conn, tenant_id: str, mem_id: uuid.UUID) -> tuple[dict[str, Any], list[uuid.UUID], str]:
    """Delete the memory and mend its chain: returns the deleted row, the predecessors changed, and how
    (``repointed`` at its successor, or ``restored`` in its place)."""
    gone = await (await conn.execute(DELETE, [tenant_id, mem_id])).fetchone()
    assert gone is not None, "the row was locked FOR UPDATE before"
    params = {"tenant_id": tenant_id, "gone": mem_id, "successor": gone["superseded_by"], "status": gone["status"]}
    if gone["superseded_by"] is not None:
        rows = await (await conn.execute(REPOINT, params)).fetchall()
        return dict(gone), [r["id"] for r in rows], "repointed"
    rows = await (await conn.execute(RESTORE, params)).fetchall()
    return dict(gone), [r["id"] for r in rows], "restored"


async def active_fact(conn: Conn, tenant_id: str, scope: str, fact_key: str, besides: uuid.UUID) -> uuid.UUID | None:
    """The active memory holding this fact in this scope, other than ``besides``."""
    row = await (await conn.execute(ACTIVE_FACT, [tenant_id, scope, fact_key, besides])).fetchone()
    return row["id"] if row else None
