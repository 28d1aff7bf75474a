"""Recall's filter (SPEC 5.1): every candidate statement starts from it, inside the statement, before ranking:
tenant, visibility for the caller's user/workflow, status active (or as it stood at ``as_of``), valid and
known at that time, not expired, allowed in prompts, and the requested kinds, tags, metadata, agent, session.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg import sql
from psycopg.types.json import Jsonb

from engram.model.recall import RecallRequest
from engram.retrieval.scope import owners
from engram.store.listing import agent_sql, visible_sql

_NOW: LiteralString = """
    m.status = 'active' AND m.valid_from <= now() AND (m.valid_until IS NULL OR m.valid_until > now())
    AND (m.expires_at IS NULL OR m.expires_at > now())
"""
# At a past time: what was valid then and already recorded, including what has since been superseded or
# archived, but never what was quarantined, pending or rejected.
_AS_OF: LiteralString = """
    m.status IN ('active', 'superseded', 'archived') AND m.recorded_at <= %(as_of)s
    AND m.valid_from <= %(as_of)s AND (m.valid_until IS NULL OR m.valid_until > %(as_of)s)
    AND (m.expires_at IS NULL OR m.expires_at > %(as_of)s) AND (m.archived_at IS NULL OR m.archived_at > %(as_of)s)
"""

# The optional parts of the filter, in the order they are added.
_OPTIONAL: dict[str, LiteralString] = {
    "agent_id": agent_sql("agent_id"),
    "session_id": "m.session_id = %(session_id)s",
    "kinds": "m.kind = ANY(%(kinds)s)",
    "tags": "m.tags @> %(tags)s",
    "metadata": "m.metadata @> %(metadata)s",
}


# A small scope's rows nearly all pass the base filter (they are the caller's own or shared), so its
# statements look up and filter this many times the candidates wanted first: at a million memories the
# lookups were the dearest part of the lexical statement (200 of them, docs/retrieval.md). An optional
# filter (agent, session, kinds, tags, metadata, as_of) may drop most of them: those keep the statement's
# wider window. Either way the rows are the filtered ranking's top.
SCOPE_WINDOW = 1.5


def scope_window(limit: int, shape: tuple[str, ...], wide: int) -> int:
    """The window of a small scope's statement for ``limit`` candidates (``wide`` times them when the
    filter has optional parts)."""
    return math.ceil(limit * SCOPE_WINDOW) if not shape else limit * wide


def visible(alias: LiteralString = "m") -> LiteralString:
    """The caller's visibility (``store.listing.visible_sql``, the rule lists use too) on the memories of
    ``alias``, or on the vectors' copy of their memory's fields (alias ``e``, migration 0010): the dense
    statements drop what the caller may not see before looking the memories up. A vector stored before that
    migration has no copy and passes; its memory decides, as it does for every candidate."""
    rule = visible_sql("user_id", "workflow_id", alias)
    return rule if alias == "m" else f"({alias}.visibility IS NULL OR {rule})"


@dataclass(frozen=True)
class Filter:
    """The WHERE clause (on alias ``m``) and its parameters. ``shape`` names the parts the clause has, so
    statements built around it can be cached per shape."""

    clause: sql.SQL
    params: dict[str, Any]
    shape: tuple[str, ...]


@functools.lru_cache(maxsize=256)
def filter_clause(shape: tuple[str, ...]) -> sql.SQL:
    parts: list[LiteralString] = [
        "m.tenant_id = %(tenant_id)s AND m.allow_in_prompt",
        _AS_OF if "as_of" in shape else _NOW,
        visible("m"),
    ]
    parts += [_OPTIONAL[name] for name in shape if name in _OPTIONAL]
    return sql.SQL(" AND ".join(parts))


def build_filter(tenant_id: str, req: RecallRequest) -> Filter:
    params: dict[str, Any] = {
        "tenant_id": tenant_id,
        "user_id": req.user_id,
        "workflow_id": req.workflow_id,
        "as_of": req.as_of,
        "owners": owners(req),  # the scope statements' (``retrieval.scope``)
    }
    shape = ["as_of"] if req.as_of is not None else []
    if req.agent_id is not None:
        shape.append("agent_id")
        params["agent_id"] = req.agent_id
    if req.session_id is not None:
        shape.append("session_id")
        params["session_id"] = req.session_id
    if req.kinds:
        shape.append("kinds")
        params["kinds"] = list(req.kinds)
    if req.tags:
        shape.append("tags")
        params["tags"] = list(req.tags)
    if req.metadata:
        shape.append("metadata")
        params["metadata"] = Jsonb(req.metadata)
    return Filter(filter_clause(tuple(shape)), params, tuple(shape))
