"""Workflow state (migration 0016): the current state per workflow, compare-and-set by revision, and every
revision kept."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

_COLUMNS: LiteralString = "workflow_id, revision, status, state, user_id, agent_id, created_at, updated_at, ended_at"

GET: LiteralString = "SELECT " + _COLUMNS + " FROM workflow_states WHERE tenant_id = %s AND workflow_id = %s"
GET_REVISION: LiteralString = """
SELECT r.workflow_id, r.revision, r.status, r.state, w.user_id, w.agent_id, w.created_at,
       r.written_at AS updated_at, CASE WHEN r.status = 'ended' THEN r.written_at END AS ended_at
  FROM workflow_state_revisions r JOIN workflow_states w USING (tenant_id, workflow_id)
 WHERE r.tenant_id = %s AND r.workflow_id = %s AND r.revision = %s
"""

# A new workflow: nothing is written when one already exists (the caller then compares revisions).
CREATE: LiteralString = (
    """
INSERT INTO workflow_states (tenant_id, workflow_id, revision, status, state, user_id, agent_id, created_at,
                             updated_at, ended_at)
VALUES (%(tenant_id)s, %(workflow_id)s, 1, %(status)s, %(state)s, %(user_id)s, %(agent_id)s, %(at)s, %(at)s,
        CASE WHEN %(status)s = 'ended' THEN %(at)s::timestamptz END)
ON CONFLICT (tenant_id, workflow_id) DO NOTHING
RETURNING """
    + _COLUMNS
)

# The next revision, only over the one the writer read and only while the workflow runs.
REPLACE: LiteralString = (
    """
UPDATE workflow_states
   SET revision = revision + 1, status = %(status)s, state = %(state)s, updated_at = %(at)s,
       ended_at = CASE WHEN %(status)s = 'ended' THEN %(at)s::timestamptz END
 WHERE tenant_id = %(tenant_id)s AND workflow_id = %(workflow_id)s AND revision = %(expected)s
   AND status = 'running'
RETURNING """
    + _COLUMNS
)

RECORD: LiteralString = """
INSERT INTO workflow_state_revisions (tenant_id, workflow_id, revision, status, state, actor, written_at)
VALUES (%s, %s, %s, %s, %s, %s, %s)
"""

# The workflow's active working memories, expired when it ends (their revisions are the caller's).
EXPIRE_WORKING: LiteralString = """
UPDATE memories SET expires_at = %(at)s, revision = revision + 1, updated_at = now()
 WHERE tenant_id = %(tenant_id)s AND workflow_id = %(workflow_id)s AND kind = 'working'
   AND status IN ('active', 'pending_approval', 'quarantined') AND (expires_at IS NULL OR expires_at > %(at)s)
RETURNING id
"""


async def get(conn: Conn, tenant_id: str, workflow_id: str, revision: int | None = None) -> dict[str, Any] | None:
    if revision is None:
        return await (await conn.execute(GET, [tenant_id, workflow_id])).fetchone()
    return await (await conn.execute(GET_REVISION, [tenant_id, workflow_id, revision])).fetchone()


async def put(
    conn: Conn, tenant_id: str, workflow_id: str, *, expected: int | None, status: str, state: dict[str, Any],
    user_id: str | None, agent_id: str | None, at: datetime, actor: str,
) -> dict[str, Any] | None:  # fmt: skip
    """The stored row after the write, or None when the write lost: the workflow exists (``expected`` None),
    or its revision is not ``expected``, or it has ended."""
    params = {
        "tenant_id": tenant_id, "workflow_id": workflow_id, "status": status, "state": Jsonb(state),
        "user_id": user_id, "agent_id": agent_id, "at": at, "expected": expected,
    }  # fmt: skip
    if expected is None:
        await conn.execute(ENSURE_TENANT, [tenant_id])
    row = await (await conn.execute(CREATE if expected is None else REPLACE, params)).fetchone()
    if row is not None:
        record = [tenant_id, workflow_id, row["revision"], status, Jsonb(state), actor, at]
        await conn.execute(RECORD, record)
    return row


async def expire_working(conn: Conn, tenant_id: str, workflow_id: str, at: datetime) -> list[uuid.UUID]:
    cur = await conn.execute(EXPIRE_WORKING, {"tenant_id": tenant_id, "workflow_id": workflow_id, "at": at})
    return [r["id"] for r in await cur.fetchall()]
