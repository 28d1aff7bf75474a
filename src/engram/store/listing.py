"""Reads of many memories: filtered, newest-first pages and revision histories, under the one visibility
rule (``model.access.visible``) written once, in SQL, for lists and recall alike."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from collections.abc import Sequence
from typing import Any, LiteralString

from psycopg import sql

from engram.errors import ValidationError
from engram.model import HistoryEntry, Memory
from engram.model.access import Acting
from engram.store.database import Conn
from engram.store.memories import MEMORY_COLUMNS


def visible_sql(user: LiteralString, workflow: LiteralString, alias: LiteralString = "m") -> LiteralString:
    """``model.access.visible`` for the memories of ``alias``, acting as the user and workflow given by the
    named parameters ``user`` and ``workflow`` (the agent part is a filter of its own: ``agent_sql``)."""
    a = alias
    return (
        f"({a}.visibility IN ('tenant', 'system')"
        f" OR ({a}.visibility = 'user' AND ({a}.user_id IS NULL OR {a}.user_id = %({user})s))"
        f" OR ({a}.visibility = 'workflow' AND ({a}.workflow_id IS NULL OR {a}.workflow_id = %({workflow})s)))"
    )


def agent_sql(agent: LiteralString, alias: LiteralString = "m") -> LiteralString:
    """Acting as an agent: its memories and those of no agent."""
    return f"({alias}.agent_id IS NULL OR {alias}.agent_id = %({agent})s)"


LIST_FILTERS = ("kind", "status", "user_id", "agent_id", "workflow_id", "session_id", "fact_key", "external_id")

HISTORY: LiteralString = """
SELECT revision, change, actor, changed_at, snapshot FROM memory_revisions
 WHERE tenant_id = %s AND memory_id = %s ORDER BY revision
"""


def encode_cursor(mem_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(mem_id.bytes).decode().rstrip("=")


def decode_cursor(cursor: str) -> uuid.UUID:
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii") + b"=" * (-len(cursor) % 4))
        return uuid.UUID(bytes=raw)
    except (ValueError, binascii.Error) as exc:
        raise ValidationError(
            "cursor is not one this API returned; pass next_cursor from the previous page", field="cursor"
        ) from exc


def acting_conditions(acting: Acting, params: dict[str, Any]) -> list[sql.Composable]:
    """The visibility rule for a caller acting as ``acting``, over ``memories``; fills in its parameters."""
    conds: list[sql.Composable] = [sql.SQL(visible_sql("acting_user", "acting_workflow", alias="memories"))]
    params.update(acting_user=acting.user_id, acting_workflow=acting.workflow_id)
    if acting.agent_id is not None:
        conds.append(sql.SQL(agent_sql("acting_agent", alias="memories")))
        params["acting_agent"] = acting.agent_id
    return conds


async def list_page(
    conn: Conn,
    tenant_id: str,
    *,
    filters: dict[str, str],
    tags: Sequence[str],
    limit: int,
    cursor: str | None,
    acting: Acting | None = None,
    contains: str | None = None,
) -> tuple[list[Memory], str | None]:
    """A page of memories, newest first; with ``acting``, only those visible acting so; with ``contains``,
    only those whose content holds that text (any case)."""
    conds: list[sql.Composable] = [sql.SQL("tenant_id = %(tenant_id)s")]
    params: dict[str, Any] = {"tenant_id": tenant_id, "limit": limit + 1}
    for name in LIST_FILTERS:
        if name in filters and filters[name] is not None:
            conds.append(sql.SQL("{} = {}").format(sql.Identifier(name), sql.Placeholder(name)))
            params[name] = filters[name]
    if tags:
        conds.append(sql.SQL("tags @> %(tags)s"))
        params["tags"] = list(tags)
    if contains:
        conds.append(sql.SQL("content ILIKE %(contains)s"))
        params["contains"] = "%" + re.sub(r"([\\%_])", r"\\\1", contains) + "%"
    if cursor:
        conds.append(sql.SQL("id < %(cursor)s"))
        params["cursor"] = decode_cursor(cursor)
    if acting is not None:
        conds += acting_conditions(acting, params)
    query = sql.SQL("SELECT {} FROM memories WHERE {} ORDER BY id DESC LIMIT %(limit)s").format(
        sql.SQL(MEMORY_COLUMNS), sql.SQL(" AND ").join(conds)
    )
    rows = await (await conn.execute(query, params)).fetchall()
    items = [Memory.from_row(r) for r in rows[:limit]]
    next_cursor = encode_cursor(items[-1].id) if len(rows) > limit and items else None
    return items, next_cursor


async def history(conn: Conn, tenant_id: str, mem_id: uuid.UUID) -> list[HistoryEntry]:
    rows = await (await conn.execute(HISTORY, [tenant_id, mem_id])).fetchall()
    return [HistoryEntry(**{**r, "snapshot": Memory.from_snapshot(r["snapshot"])}) for r in rows]
