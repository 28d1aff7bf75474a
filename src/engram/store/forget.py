"""Forgetting a subject (SPEC 6.5): every row of one tenant that holds a user's memories, their derived
summaries, the receipts of the user's queries and of recalls that used those memories, their audit trail,
the user's workflow state, actions and bound keys, and the vault values only they referenced. Each
statement returns what it removed, so the service can certify it."""

from __future__ import annotations

import uuid
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.policy.pii import PLACEHOLDER, parse_placeholder
from engram.store.database import Conn

# The subject's memories and, transitively, the memories derived from them (``derived_from`` relations).
SUBJECT_MEMORIES: LiteralString = """
WITH RECURSIVE gone(id) AS (
    SELECT id FROM memories WHERE tenant_id = %(tenant_id)s AND user_id = %(user_id)s
    UNION
    SELECT r.src_id FROM relations r JOIN gone g ON r.tenant_id = %(tenant_id)s AND r.dst_id = g.id
     WHERE r.type = 'derived_from'
)
SELECT m.id, m.content, m.summary FROM gone JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = gone.id
"""

# One memory and, transitively, the memories derived from it (summaries may repeat what it said).
MEMORY_AND_DERIVED: LiteralString = """
WITH RECURSIVE gone(id) AS (
    SELECT %(memory_id)s::uuid
    UNION
    SELECT r.src_id FROM relations r JOIN gone g ON r.tenant_id = %(tenant_id)s AND r.dst_id = g.id
     WHERE r.type = 'derived_from'
)
SELECT m.id, m.content, m.summary FROM gone JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = gone.id
"""
# Their audit events, and other events naming them (a relation to one of them, say).
AUDIT_OF: LiteralString = """
DELETE FROM audit_events a
 WHERE a.tenant_id = %(tenant_id)s
   AND (a.memory_id = ANY(%(ids)s)
        OR EXISTS (SELECT 1 FROM unnest(%(texts)s::text[]) AS i(x) WHERE strpos(a.details::text, i.x) > 0))
RETURNING a.id"""
RECEIPTS_NAMING: LiteralString = """
DELETE FROM recall_receipts r
 WHERE r.tenant_id = %(tenant_id)s
   AND EXISTS (SELECT 1 FROM unnest(%(texts)s::text[]) AS i(x)
                WHERE strpos(r.selected::text, i.x) > 0 OR strpos(r.retrievers::text, i.x) > 0)
RETURNING r.id"""
DELETE_MEMORIES: LiteralString = (
    "DELETE FROM memories WHERE tenant_id = %(tenant_id)s AND id = ANY(%(ids)s) RETURNING id"
)

# What goes with the memories by cascade (counted before, so the certificate can say it).
CASCADED: dict[str, LiteralString] = {
    "memory_revisions": "SELECT count(*) AS n FROM memory_revisions WHERE tenant_id = %(tenant_id)s"
    " AND memory_id = ANY(%(ids)s)",
    "memory_embeddings": "SELECT count(*) AS n FROM memory_embeddings WHERE tenant_id = %(tenant_id)s"
    " AND memory_id = ANY(%(ids)s)",
    "embedding_jobs": "SELECT count(*) AS n FROM embedding_jobs WHERE tenant_id = %(tenant_id)s"
    " AND memory_id = ANY(%(ids)s)",
    "relations": "SELECT count(*) AS n FROM relations WHERE tenant_id = %(tenant_id)s"
    " AND (src_id = ANY(%(ids)s) OR dst_id = ANY(%(ids)s))",
    "search_postings": "SELECT count(*) AS n FROM search_postings WHERE tenant_id = %(tenant_id)s"
    " AND memory_id = ANY(%(ids)s)",
}

# Rows removed outright, each statement returning one row per removal.
REMOVALS: dict[str, LiteralString] = {
    # The user's queries, and any recall whose receipt names one of the memories (candidates or packet).
    "recall_receipts": """
DELETE FROM recall_receipts r
 WHERE r.tenant_id = %(tenant_id)s
   AND (r.acting_user_id = %(user_id)s OR r.request ->> 'user_id' = %(user_id)s
        OR EXISTS (SELECT 1 FROM unnest(%(texts)s::text[]) AS i(x)
                    WHERE strpos(r.selected::text, i.x) > 0 OR strpos(r.retrievers::text, i.x) > 0))
RETURNING r.id""",
    # Their audit trail, and events whose details name the user (keys bound to them, say).
    "audit_events": """
DELETE FROM audit_events a
 WHERE a.tenant_id = %(tenant_id)s
   AND (a.memory_id = ANY(%(ids)s) OR strpos(a.details::text, to_jsonb(%(user_id)s::text)::text) > 0
        OR EXISTS (SELECT 1 FROM unnest(%(texts)s::text[]) AS i(x) WHERE strpos(a.details::text, i.x) > 0))
RETURNING a.id""",
    "workflow_state_revisions": """
DELETE FROM workflow_state_revisions r USING workflow_states w
 WHERE r.tenant_id = %(tenant_id)s AND w.tenant_id = r.tenant_id AND w.workflow_id = r.workflow_id
   AND w.user_id = %(user_id)s
RETURNING r.revision""",
    "workflow_states": """
DELETE FROM workflow_states WHERE tenant_id = %(tenant_id)s AND user_id = %(user_id)s RETURNING workflow_id""",
    "outbox_actions": """
DELETE FROM outbox_actions
 WHERE tenant_id = %(tenant_id)s
   AND (user_id = %(user_id)s OR memory_id = ANY(%(ids)s) OR outcome_memory_id = ANY(%(ids)s))
RETURNING id""",
    "api_keys": "DELETE FROM api_keys WHERE tenant_id = %(tenant_id)s AND user_id = %(user_id)s RETURNING id",
    "memories": "DELETE FROM memories WHERE tenant_id = %(tenant_id)s AND id = ANY(%(ids)s) RETURNING id",
}

# A vault value that only the forgotten memories referenced (one another memory still holds stays).
ORPHANED_VAULT: LiteralString = """
DELETE FROM pii_vault v
 WHERE v.tenant_id = %(tenant_id)s AND v.kind = %(kind)s AND v.ordinal = %(ordinal)s
   AND NOT EXISTS (SELECT 1 FROM memories m
                    WHERE m.tenant_id = %(tenant_id)s AND m.id <> ALL(%(ids)s)
                      AND (m.content ~ %(pattern)s OR coalesce(m.summary, '') ~ %(pattern)s))
RETURNING v.kind"""


TOMBSTONE: LiteralString = (
    "INSERT INTO audit_events (tenant_id, id, actor, action, memory_id, details)"
    " VALUES (%s, %s, %s, 'subject.forgotten', NULL, %s)"
)


async def subject_memories(conn: Conn, tenant_id: str, user_id: str) -> list[dict[str, Any]]:
    return await (await conn.execute(SUBJECT_MEMORIES, {"tenant_id": tenant_id, "user_id": user_id})).fetchall()


async def count_cascaded(conn: Conn, tenant_id: str, ids: list[uuid.UUID]) -> dict[str, int]:
    out = {}
    for table, stmt in CASCADED.items():
        row = await (await conn.execute(stmt, {"tenant_id": tenant_id, "ids": ids})).fetchone()
        out[table] = int(row["n"]) if row else 0
    return out


async def remove(conn: Conn, table: str, params: dict[str, Any]) -> int:
    return len(await (await conn.execute(REMOVALS[table], params)).fetchall())


async def remove_orphaned_value(
    conn: Conn, tenant_id: str, ids: list[uuid.UUID], kind: str, ordinal: int, text: str
) -> int:
    """Remove the vault value behind placeholder ``text`` unless a remaining memory holds it."""
    params = {"tenant_id": tenant_id, "ids": ids, "kind": kind, "ordinal": ordinal, "pattern": rf"\m{text}\M"}
    return len(await (await conn.execute(ORPHANED_VAULT, params)).fetchall())


async def tombstone(conn: Conn, tenant_id: str, actor: str, event_id: uuid.UUID, details: dict[str, Any]) -> None:
    await conn.execute(TOMBSTONE, [tenant_id, event_id, actor, Jsonb(details)])


async def memory_and_derived(conn: Conn, tenant_id: str, memory_id: uuid.UUID) -> list[dict[str, Any]]:
    return await (await conn.execute(MEMORY_AND_DERIVED, {"tenant_id": tenant_id, "memory_id": memory_id})).fetchall()


async def remove_memory_traces(
    conn: Conn, tenant_id: str, ids: list[uuid.UUID], derived: list[uuid.UUID]
) -> dict[str, int]:
    """The receipts that hold copies of these memories, their audit events, and the derived memories (the
    memory itself is the caller's, to mend its chain)."""
    params = {"tenant_id": tenant_id, "ids": ids, "texts": [str(i) for i in ids]}
    return {
        "recall_receipts": len(await (await conn.execute(RECEIPTS_NAMING, params)).fetchall()),
        "audit_events": len(await (await conn.execute(AUDIT_OF, params)).fetchall()),
        "derived_memories": len(await (await conn.execute(DELETE_MEMORIES, {**params, "ids": derived})).fetchall()),
    }


async def remove_orphaned_values(conn: Conn, tenant_id: str, ids: list[uuid.UUID], rows: list[dict[str, Any]]) -> int:
    """The vault values behind the placeholders these memories (``rows``: content, summary) hold that no other
    memory holds."""
    held = {m.group() for r in rows for text in (r["content"], r["summary"] or "") for m in PLACEHOLDER.finditer(text)}
    removed = 0
    for text in sorted(held):
        parsed = parse_placeholder(text)
        if parsed is not None:
            removed += await remove_orphaned_value(conn, tenant_id, ids, parsed[0], parsed[1], text)
    return removed
