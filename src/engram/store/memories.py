"""Memory rows: the write path's SQL (insert, replay, supersede, update, archive, delete) and reads.

Every function takes a connection already inside ``Database.tenant(...)``: RLS is on, and each query
also filters by tenant explicitly.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, LiteralString, TypeVar

from psycopg import sql
from psycopg.types.json import Jsonb

from engram.errors import ValidationError
from engram.model import Memory, MemoryInput, new_id
from engram.model.admission import Admitted
from engram.model.decision import Admission
from engram.store.database import Conn

MEMORY_COLUMNS: LiteralString = """
    tenant_id, id, user_id, agent_id, workflow_id, session_id, external_id, kind, subtype, visibility,
    content, summary, content_hash, fact_key, source_type, source_ref, confidence, importance, status,
    revision, valid_from, valid_until, recorded_at, updated_at, expires_at, superseded_by, contains_pii,
    allow_in_prompt, require_citation, require_freshness_check, retention_reason, tags, metadata,
    last_used_at, use_count, admission, sources
"""

# The snapshot kept in memory_revisions: the record minus derived columns.
_SNAPSHOT: LiteralString = (
    "to_jsonb(m) - '{scope_key,agent_key,fts_config,search_key,search_len,speaker,scope_owner}'::text[]"
)

# Many rows in one statement (so the statement-level postings trigger runs once per batch).
INSERT_MEMORIES: LiteralString = """
INSERT INTO memories (
    tenant_id, id, user_id, agent_id, workflow_id, session_id, external_id, kind, subtype, visibility,
    content, summary, content_hash, fact_key, source_type, source_ref, confidence, importance, status,
    valid_from, valid_until, expires_at, contains_pii, allow_in_prompt, require_citation,
    require_freshness_check, retention_reason, tags, metadata, fts_config, admission)
SELECT %(tenant_id)s, x.id, x.user_id, x.agent_id, x.workflow_id, x.session_id, x.external_id, x.kind, x.subtype,
       x.visibility, x.content, x.summary, x.content_hash, x.fact_key, x.source_type, x.source_ref, x.confidence,
       x.importance, x.status, coalesce(x.valid_from, now()), x.valid_until, x.expires_at, x.contains_pii,
       x.allow_in_prompt, x.require_citation, x.require_freshness_check, x.retention_reason,
       coalesce(x.tags, '{}'), coalesce(x.metadata, '{}'), %(fts_config)s::regconfig, x.admission
  FROM jsonb_to_recordset(%(rows)s) AS x(
       ord integer, id uuid, user_id text, agent_id text, workflow_id text, session_id text, external_id text,
       kind text, subtype text, visibility text, content text, summary text, content_hash text, fact_key text,
       source_type text, source_ref text, confidence float8, importance float8, valid_from timestamptz,
       valid_until timestamptz, expires_at timestamptz, contains_pii boolean, allow_in_prompt boolean,
       require_citation boolean, require_freshness_check boolean, retention_reason text, tags text[], metadata jsonb,
       status text, admission jsonb)
 ORDER BY x.ord
ON CONFLICT (tenant_id, agent_key, external_id) WHERE external_id IS NOT NULL DO NOTHING
RETURNING id
"""

SELECT_BY_EXTERNAL_ID: LiteralString = (
    "SELECT " + MEMORY_COLUMNS + " FROM memories WHERE tenant_id = %s AND agent_key = %s AND external_id = %s"
)

SELECT_ACTIVE_FACT: LiteralString = (
    "SELECT " + MEMORY_COLUMNS + " FROM memories"
    " WHERE tenant_id = %s AND scope_key = %s AND fact_key = %s AND status = 'active' FOR UPDATE"
)

SELECT_MEMORY: LiteralString = "SELECT " + MEMORY_COLUMNS + " FROM memories WHERE tenant_id = %s AND id = %s"
SELECT_MEMORY_FOR_UPDATE: LiteralString = SELECT_MEMORY + " FOR UPDATE"
SELECT_MEMORIES: LiteralString = "SELECT " + MEMORY_COLUMNS + " FROM memories WHERE tenant_id = %s AND id = ANY(%s)"

FACT_LOCK: LiteralString = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
CLOCK: LiteralString = "SELECT clock_timestamp() AS ts"

SUPERSEDE: LiteralString = """
UPDATE memories
   SET status = 'superseded', superseded_by = %(new_id)s, revision = revision + 1, updated_at = now(),
       valid_until = GREATEST(LEAST(coalesce(valid_until, 'infinity'), %(valid_from)s),
                              valid_from + interval '1 microsecond')
 WHERE tenant_id = %(tenant_id)s AND id = %(old_id)s
"""

RECORD_REVISIONS: LiteralString = (
    "INSERT INTO memory_revisions (tenant_id, memory_id, revision, change, actor, snapshot)"
    " SELECT m.tenant_id, m.id, m.revision, c.change, %s, " + _SNAPSHOT + " FROM memories m"
    " JOIN unnest(%s::uuid[], %s::text[]) AS c(id, change) ON m.id = c.id"
    " WHERE m.tenant_id = %s"
)

RECORD_AUDIT: LiteralString = """
INSERT INTO audit_events (tenant_id, id, actor, action, memory_id, details)
SELECT %s, a.id, %s, a.action, a.memory_id, a.details::jsonb
  FROM unnest(%s::uuid[], %s::text[], %s::uuid[], %s::text[]) AS a(id, action, memory_id, details)
"""

TENANT_FTS_CONFIG: LiteralString = "SELECT fts_config::text AS cfg FROM tenants WHERE tenant_id = %s"

ARCHIVE: LiteralString = (
    "UPDATE memories SET status = 'archived', archived_at = now(), revision = revision + 1, updated_at = now()"
    " WHERE tenant_id = %s AND id = %s RETURNING " + MEMORY_COLUMNS
)


# Columns a PATCH may set, mapped from MemoryPatch field names (nested models flattened).
UPDATABLE_COLUMNS = (
    "content", "content_hash", "kind", "subtype", "visibility", "summary", "source_type", "source_ref",
    "confidence", "importance", "valid_from", "valid_until", "expires_at", "contains_pii", "allow_in_prompt",
    "require_citation", "require_freshness_check", "retention_reason", "tags", "metadata", "status", "admission",
)  # fmt: skip


def scope_key(item: MemoryInput | Memory) -> str:
    """Must match the generated column memories.scope_key."""
    return f"{item.user_id or ''}\x1f{item.agent_id or ''}\x1f{item.workflow_id or ''}"


def fact_lock_key(tenant_id: str, item: MemoryInput | Memory) -> str:
    return f"{tenant_id}\x1e{scope_key(item)}\x1e{item.fact_key}"


T = TypeVar("T")
# A batch is written a few statements at a time: each statement stays well inside the statement timeout
# (1,000 memories of 12 KB took 8.7 s as one), while the batch is still one transaction.
CHUNK_ITEMS = 200
CHUNK_CHARACTERS = 200_000


def chunks(items: Sequence[T], size: Callable[[T], int]) -> Iterator[list[T]]:
    """``items`` in order, cut into runs of at most CHUNK_ITEMS items and about CHUNK_CHARACTERS of text."""
    part: list[T] = []
    used = 0
    for item in items:
        if part and (len(part) >= CHUNK_ITEMS or used + size(item) > CHUNK_CHARACTERS):
            yield part
            part, used = [], 0
        part.append(item)
        used += size(item)
    if part:
        yield part


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


async def _insert(
    conn: Conn, tenant_id: str, rows: Sequence[tuple[uuid.UUID, Admitted, datetime | None]], fts_config: str
) -> set[uuid.UUID]:
    """Insert (id, admitted item, valid_from override) rows in one statement; returns the ids actually
    inserted (an external_id already taken is skipped, not an error)."""
    payload = []
    for order, (mid, admitted, valid_from) in enumerate(rows):
        item = admitted.item
        row = row_params(tenant_id, mid, item, fts_config)
        row["metadata"] = item.metadata
        row["status"] = admitted.admission.status
        row["admission"] = admitted.admission.model_dump(mode="json")
        row["ord"] = order
        if valid_from is not None:
            row["valid_from"] = valid_from
        payload.append(row)
    params = {"tenant_id": tenant_id, "fts_config": fts_config, "rows": Jsonb(payload, dumps=_dumps)}
    cur = await conn.execute(INSERT_MEMORIES, params)
    return {r["id"] for r in await cur.fetchall()}


def row_params(tenant_id: str, mem_id: uuid.UUID, item: MemoryInput, fts_config: str) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "id": mem_id,
        "user_id": item.user_id,
        "agent_id": item.agent_id,
        "workflow_id": item.workflow_id,
        "session_id": item.session_id,
        "external_id": item.external_id,
        "kind": item.kind,
        "subtype": item.subtype,
        "visibility": item.visibility,
        "content": item.content,
        "summary": item.summary,
        "content_hash": item.content_hash,
        "fact_key": item.fact_key,
        "source_type": item.source.type,
        "source_ref": item.source.ref,
        "confidence": item.confidence,
        "importance": item.importance,
        "valid_from": item.valid_from,
        "valid_until": item.valid_until,
        "expires_at": item.expires_at,
        "contains_pii": item.policy.contains_pii,
        "allow_in_prompt": item.policy.allow_in_prompt,
        "require_citation": item.policy.require_citation,
        "require_freshness_check": item.policy.require_freshness_check,
        "retention_reason": item.policy.retention_reason,
        "tags": item.tags,
        "metadata": Jsonb(item.metadata),
        "fts_config": fts_config,
    }


def created_details(item: MemoryInput, admission: Admission) -> dict[str, Any]:
    """The audit event of a new memory: its kind, and how admission decided (codes only: no text)."""
    details: dict[str, Any] = {"kind": item.kind}
    if admission.reasons or admission.decision != "admit":
        details["admission"] = {"decision": admission.decision, "reasons": admission.codes}
    return details


@dataclass
class Outcome:
    """What happened to one item of a write, before it is turned into a WriteResult."""

    index: int
    id: uuid.UUID
    created: bool
    reasons: list[str]
    supersedes: list[uuid.UUID] = field(default_factory=list)
    memory: Memory | None = None
    error: Exception | None = None
    content_hash: str = ""
    embedded: bool = False  # a replayed memory has a vector of the current model
    merged: bool = False  # ``memory`` is the stored memory this item was merged into


@dataclass
class Journal:
    """Revisions and audit events gathered during a transaction, written in two statements at the end."""

    revisions: list[tuple[uuid.UUID, str]] = field(default_factory=list)
    events: list[tuple[str, uuid.UUID, dict[str, Any]]] = field(default_factory=list)

    def record(self, memory_id: uuid.UUID, change: str, action: str, details: dict[str, Any]) -> None:
        self.revisions.append((memory_id, change))
        self.events.append((action, memory_id, details))

    def pending(self, memory_id: uuid.UUID) -> bool:
        """Whether a revision of this memory waits: it must be written before the memory changes again (a
        revision's snapshot is taken when it is written)."""
        return any(mid == memory_id for mid, _ in self.revisions)

    async def flush(self, conn: Conn, tenant_id: str, actor: str) -> None:
        for part in chunks(self.revisions, lambda _: 0):  # CHUNK_ITEMS at a time
            ids, changes = zip(*part, strict=True)
            await conn.execute(RECORD_REVISIONS, [actor, list(ids), list(changes), tenant_id])
        if self.events:
            await write_audit(conn, tenant_id, actor, self.events)
        self.revisions.clear()
        self.events.clear()


async def write_audit(
    conn: Conn,
    tenant_id: str,
    actor: str,
    events: Sequence[tuple[str, uuid.UUID | None, dict[str, Any]]],
    ids: Sequence[uuid.UUID] | None = None,
) -> None:
    """Record audit events (with these ids, when the caller must name them)."""
    await conn.execute(
        RECORD_AUDIT,
        [
            tenant_id,
            actor,
            list(ids) if ids is not None else [new_id() for _ in events],
            [e[0] for e in events],
            [e[1] for e in events],
            [json.dumps(e[2], default=str) for e in events],
        ],
    )


async def tenant_fts_config(conn: Conn, tenant_id: str) -> str:
    row = await (await conn.execute(TENANT_FTS_CONFIG, [tenant_id])).fetchone()
    return str(row["cfg"]) if row else "english"


async def insert_plain(
    conn: Conn,
    tenant_id: str,
    items: Sequence[Admitted],
    fts_config: str,
    journal: Journal,
) -> list[Outcome]:
    """Insert items without a fact_key, a statement per ``chunks`` of them; external_id replays are resolved
    after."""
    ids = [new_id() for _ in items]
    rows = [(mid, admitted, None) for mid, admitted in zip(ids, items, strict=True)]
    created_ids: set[uuid.UUID] = set()
    for part in chunks(rows, lambda row: len(row[1].item.content)):
        created_ids |= await _insert(conn, tenant_id, part, fts_config)
    inserted = [mid in created_ids for mid in ids]
    outcomes: list[Outcome] = []
    for admitted, mid, created in zip(items, ids, inserted, strict=True):
        if created:
            details = created_details(admitted.item, admitted.admission)
            journal.record(mid, "created", "memory.created", details)
            outcomes.append(Outcome(admitted.index, mid, True, ["created"]))
        else:
            outcomes.append(await _replay(conn, tenant_id, admitted.index, admitted.item))
    return outcomes


async def _replay(conn: Conn, tenant_id: str, index: int, item: MemoryInput) -> Outcome:
    """The external_id exists: same content is a replay, different content a conflict."""
    from engram.errors import IdempotencyConflict

    row = await (
        await conn.execute(SELECT_BY_EXTERNAL_ID, [tenant_id, item.agent_id or "", item.external_id])
    ).fetchone()
    assert row is not None, "ON CONFLICT reported an external_id that cannot be read back"
    existing = Memory.from_row(row)
    if existing.content_hash == item.content_hash:
        return Outcome(index, existing.id, False, ["idempotent_replay"], memory=existing)
    return Outcome(
        index,
        existing.id,
        False,
        ["idempotency_conflict"],
        error=IdempotencyConflict(
            f"external_id {item.external_id!r} was already used for memory {existing.id} with different "
            "content; use a new external_id for new content, or PATCH the existing memory",
            existing_id=str(existing.id),
        ),
    )


async def insert_fact(conn: Conn, tenant_id: str, admitted: Admitted, fts_config: str, journal: Journal) -> Outcome:
    """Insert a memory with a fact_key, superseding the active one in its scope, under an advisory lock."""
    index, item, admission = admitted.index, admitted.item, admitted.admission
    await conn.execute(FACT_LOCK, [fact_lock_key(tenant_id, item)])
    if item.external_id is not None:
        row = await (
            await conn.execute(SELECT_BY_EXTERNAL_ID, [tenant_id, item.agent_id or "", item.external_id])
        ).fetchone()
        if row is not None:
            return await _replay(conn, tenant_id, index, item)
    active_row = await (await conn.execute(SELECT_ACTIVE_FACT, [tenant_id, scope_key(item), item.fact_key])).fetchone()
    active = Memory.from_row(active_row) if active_row else None
    if active is not None and active.content_hash == item.content_hash:
        return Outcome(index, active.id, False, ["fact_unchanged"], memory=active)

    mem_id = new_id()
    valid_from: datetime | None = None
    supersedes: list[uuid.UUID] = []
    reasons = ["created"]
    # A memory held for approval or quarantined supersedes nothing until a reviewer admits it.
    if active is not None and admission.status == "active":
        clock = await (await conn.execute(CLOCK)).fetchone()
        assert clock is not None
        valid_from = item.valid_from or clock["ts"]
        await conn.execute(
            SUPERSEDE,
            {"new_id": mem_id, "valid_from": valid_from, "tenant_id": tenant_id, "old_id": active.id},
        )
        journal.record(active.id, "superseded", "memory.superseded", {"superseded_by": str(mem_id)})
        supersedes.append(active.id)
        reasons.append("superseded_previous")
    if not await _insert(conn, tenant_id, [(mem_id, admitted, valid_from)], fts_config):
        # external_id inserted concurrently by a writer that did not take the fact lock
        return await _replay(conn, tenant_id, index, item)
    details = {**created_details(item, admission), "fact_key": item.fact_key}
    if supersedes:
        details["supersedes"] = [str(s) for s in supersedes]
    journal.record(mem_id, "created", "memory.created", details)
    return Outcome(index, mem_id, True, reasons, supersedes=supersedes)


async def fetch_one(conn: Conn, tenant_id: str, mem_id: uuid.UUID, *, for_update: bool = False) -> Memory | None:
    query = SELECT_MEMORY_FOR_UPDATE if for_update else SELECT_MEMORY
    row = await (await conn.execute(query, [tenant_id, mem_id])).fetchone()
    return Memory.from_row(row) if row else None


def patch_columns(changes: dict[str, Any]) -> dict[str, Any]:
    """Flatten MemoryPatch changes (source, policy) into column values."""
    cols: dict[str, Any] = {}
    for name, value in changes.items():
        if name == "source":
            cols["source_type"] = value.type
            cols["source_ref"] = value.ref
        elif name == "policy":
            cols.update(value.model_dump())
        elif name in ("metadata", "admission"):
            cols[name] = Jsonb(value)
        else:
            cols[name] = value
    unknown = set(cols) - set(UPDATABLE_COLUMNS)
    if unknown:
        raise ValidationError(f"cannot update {sorted(unknown)}", field=sorted(unknown)[0])
    return cols


async def update(conn: Conn, tenant_id: str, mem_id: uuid.UUID, cols: dict[str, Any]) -> Memory:
    assignments = sql.SQL(", ").join(
        sql.SQL("{} = {}").format(sql.Identifier(name), sql.Placeholder(name)) for name in cols
    )
    query = sql.SQL(
        "UPDATE memories SET {}, revision = revision + 1, updated_at = now()"
        " WHERE tenant_id = %(__tenant)s AND id = %(__id)s RETURNING {}"
    ).format(assignments, sql.SQL(MEMORY_COLUMNS))
    row = await (await conn.execute(query, {**cols, "__tenant": tenant_id, "__id": mem_id})).fetchone()
    assert row is not None, "the row was locked FOR UPDATE before"
    return Memory.from_row(row)


async def archive(conn: Conn, tenant_id: str, mem_id: uuid.UUID) -> Memory:
    row = await (await conn.execute(ARCHIVE, [tenant_id, mem_id])).fetchone()
    assert row is not None
    return Memory.from_row(row)
