"""Changes to stored memories: update (optimistic, If-Match), archive and unarchive, delete (which mends
the memory's supersession chain, ``store.chains``). Each checks the caller's role and what it may see."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engram.errors import ConflictError, NotCurrent, NotFoundError, PermissionDenied, RevisionConflict
from engram.model import Memory, MemoryPatch
from engram.model.access import VISIBILITY_RANK, Acting, Action, Principal, visible
from engram.model.forget import DeletionCertificate, certificate_digest
from engram.model.ids import new_id
from engram.model.text import content_hash
from engram.service.admission import admit_patch
from engram.store import chains
from engram.store import embeddings as emb
from engram.store import forget as forget_store
from engram.store import memories as q
from engram.store.database import Conn

if TYPE_CHECKING:
    from engram.service.core import Core


def not_found(mid: uuid.UUID) -> NotFoundError:
    return NotFoundError(f"memory {mid} does not exist in this tenant (or is not visible to this caller)", field="id")


def sees(who: Principal, acting: Acting, mem: Memory) -> bool:
    """``model.access.visible``, or everything for reviewers and admins."""
    return who.sees_all or visible(
        acting, visibility=mem.visibility, user_id=mem.user_id, agent_id=mem.agent_id, workflow_id=mem.workflow_id
    )


async def locked(
    conn: Conn, who: Principal, acting: Acting, tenant_id: str, mid: uuid.UUID, expected_revision: int | None
) -> Memory:
    """The memory, locked for a change, if the caller may see and change it and its revision is the expected
    one. A memory of a fact takes the fact's lock first, as writes of the fact do (``store.memories``), so
    changes to one chain never interleave."""
    seen = await q.fetch_one(conn, tenant_id, mid)
    if seen is None:
        tomb = await chains.tombstone(conn, tenant_id, mid)
        if tomb is not None and (who.sees_all or visible(acting, **_scope_of(tomb))):
            now = tomb.get("current_id")
            raise NotCurrent(
                f"memory {mid} was deleted"
                + (f"; memory {now} holds its fact now: change that one" if now else "; write a new memory"),
                current_id=now,
            )
        raise not_found(mid)
    if not sees(who, acting, seen):
        raise not_found(mid)
    if not who.may_change(user_id=seen.user_id, agent_id=seen.agent_id, visibility=seen.visibility):
        raise PermissionDenied(
            f"memory {mid} is not this key's to change: a key bound to a user or agent changes only the memories "
            "of that user (visibility user or workflow) and agent"
        )
    if seen.fact_key is not None:
        await conn.execute(q.FACT_LOCK, [q.fact_lock_key(tenant_id, seen)])
    current = await q.fetch_one(conn, tenant_id, mid, for_update=True)
    if current is None:  # deleted while we waited for the fact's lock
        raise NotCurrent(f"memory {mid} was deleted meanwhile; re-read its fact", current_id=None)
    if expected_revision is not None and current.revision != expected_revision:
        raise RevisionConflict(
            f"memory {mid} is at revision {current.revision}, not {expected_revision}: someone changed it "
            "first. Re-read it, re-apply your change and retry with the new revision",
            current_revision=current.revision,
        )
    return current


def _scope_of(tomb: dict[str, Any]) -> dict[str, Any]:
    """The visibility fields a tombstone keeps of its memory (tombstones from before they did: tenant-wide)."""
    return {
        "visibility": tomb.get("visibility", "tenant"), "user_id": tomb.get("user_id"),
        "agent_id": tomb.get("agent_id"), "workflow_id": tomb.get("workflow_id"),
    }  # fmt: skip


async def update(
    engram: Core, who: Principal, acting: Acting, mid: uuid.UUID, changes: MemoryPatch, expected_revision: int
) -> Memory:
    who.require(Action.UPDATE)
    tenant_id = who.tenant_id
    content_changed = False
    journal = q.Journal()
    async with engram.db.tenant(tenant_id) as conn:
        current = await locked(conn, who, acting, tenant_id, mid, expected_revision)
        if current.superseded_by is not None:  # superseded (or archived since): no longer its fact's memory
            now = await chains.head(conn, tenant_id, mid)
            raise NotCurrent(
                f"memory {mid} was superseded by memory {now}: change that one (or write the fact again)",
                current_id=str(now),
            )
        if changes.visibility is not None and VISIBILITY_RANK[changes.visibility] > VISIBILITY_RANK[current.visibility]:
            who.require(Action.WIDEN_VISIBILITY)
            who.check_visibility(changes.visibility)
        cols = q.patch_columns(await admit_patch(engram, tenant_id, current, changes.changes()))
        if "content" in cols:
            cols["content_hash"] = content_hash(cols["content"])
            content_changed = cols["content_hash"] != current.content_hash
        mem = await q.update(conn, tenant_id, mid, cols)
        if content_changed and engram.gateway is not None:
            await conn.execute(emb.DROP_VECTORS, [tenant_id, mid])
            await emb.enqueue(conn, tenant_id, engram.gateway.model_id, [mid], "content_changed")
        if cols.keys() & {"content", "summary"}:
            await _refresh(engram, conn, tenant_id, [mem.session_id], [mid])
        elif "valid_from" in cols:  # the memory moved within its session: rebuild all of it
            await _refresh(engram, conn, tenant_id, [mem.session_id])
        journal.record(mid, "updated", "memory.updated", {"fields": sorted(changes.model_fields_set)})
        await journal.flush(conn, tenant_id, who.actor)
    if content_changed:
        engram.work_pending.set()
    return mem


async def archive(
    engram: Core, who: Principal, acting: Acting, mid: uuid.UUID, expected_revision: int | None
) -> Memory:
    """Take a memory out of service, keeping it and its history (idempotent)."""
    who.require(Action.ARCHIVE)
    journal = q.Journal()
    async with engram.db.tenant(who.tenant_id) as conn:
        current = await locked(conn, who, acting, who.tenant_id, mid, expected_revision)
        if current.status == "archived":
            return current
        if current.status in ("pending_approval", "quarantined"):
            raise ConflictError(
                f"memory {mid} is {current.status}: a reviewer approves or rejects it "
                f"(POST /v1/approvals/{mid}:approve or :reject), it is not archived"
            )
        mem = await q.archive(conn, who.tenant_id, mid)
        journal.record(mid, "archived", "memory.archived", {"previous_status": current.status})
        await journal.flush(conn, who.tenant_id, who.actor)
    return mem


async def unarchive(
    engram: Core, who: Principal, acting: Acting, mid: uuid.UUID, expected_revision: int | None
) -> Memory:
    """Put an archived memory back in service (idempotent for an active one)."""
    who.require(Action.UNARCHIVE)
    journal = q.Journal()
    async with engram.db.tenant(who.tenant_id) as conn:
        current = await locked(conn, who, acting, who.tenant_id, mid, expected_revision)
        if current.status == "active":
            return current
        if current.status != "archived":
            raise ConflictError(f"memory {mid} is {current.status}, not archived: only archived memories come back")
        if current.fact_key is not None and current.superseded_by is None:
            holder = await chains.active_fact(conn, who.tenant_id, q.scope_key(current), current.fact_key, mid)
            if holder is not None:
                raise NotCurrent(
                    f"memory {holder} holds the fact {current.fact_key!r} in this scope now: archive it first, or "
                    "write the fact again",
                    current_id=str(holder),
                )
        row = await (await conn.execute(chains.UNARCHIVE, [who.tenant_id, mid])).fetchone()
        assert row is not None
        journal.record(mid, "restored", "memory.unarchived", {})
        await journal.flush(conn, who.tenant_id, who.actor)
    return Memory.from_row(row)


async def delete(
    engram: Core, who: Principal, acting: Acting, mid: uuid.UUID, expected_revision: int | None
) -> DeletionCertificate:
    """Remove a memory with its vectors, postings, history and relations, the memories derived from it, the
    receipts holding copies of it, its audit events and the vault values only it held; mend its chain; leave
    a tombstone without content, and certify what went (SPEC 6.5)."""
    who.require(Action.DELETE)
    journal = q.Journal()
    tenant_id = who.tenant_id
    async with engram.db.tenant(tenant_id) as conn:
        await locked(conn, who, acting, tenant_id, mid, expected_revision)
        rows = await forget_store.memory_and_derived(conn, tenant_id, mid)
        ids = [r["id"] for r in rows]
        derived = [i for i in ids if i != mid]
        removed = await forget_store.count_cascaded(conn, tenant_id, ids)
        removed["pii_vault"] = await forget_store.remove_orphaned_values(conn, tenant_id, ids, rows)
        removed.update(await forget_store.remove_memory_traces(conn, tenant_id, ids, derived))
        gone, mended, how = await chains.delete(conn, tenant_id, mid)
        removed["memories"] = 1 + removed.pop("derived_memories")
        for pred in mended:
            journal.record(pred, "restored" if how == "restored" else "superseded", f"memory.{how}",
                           {"because_deleted": str(mid)})  # fmt: skip
        await journal.flush(conn, tenant_id, who.actor)
        await _refresh(engram, conn, tenant_id, [gone["session_id"]])
        subject = f"memory:{mid}"
        digest = certificate_digest(tenant_id, subject, removed, ids)
        tomb: dict[str, Any] = {
            "kind": gone["kind"], "revision": gone["revision"], "status": gone["status"],
            # who may learn that it was deleted (model.access.visible); no content
            "visibility": gone["visibility"], "user_id": gone["user_id"], "agent_id": gone["agent_id"],
            "workflow_id": gone["workflow_id"], "removed": removed, "digest": digest,
        }  # fmt: skip
        current = gone["superseded_by"] or (mended[0] if how == "restored" and mended else None)
        if current is not None:
            tomb["current_id"] = str(current)
        tombstone = new_id()
        await q.write_audit(conn, tenant_id, who.actor, [("memory.deleted", mid, tomb)], ids=[tombstone])
    engram.retriever.forget_corpus(tenant_id)
    return DeletionCertificate(
        tenant_id=tenant_id, subject=subject, removed=removed, memories=ids, completed_at=datetime.now(UTC),
        caches_cleared=["corpus_statistics", "scope_sizes"], tombstone_id=tombstone, digest=digest,
    )  # fmt: skip


async def _refresh(
    engram: Core, conn: Conn, tenant_id: str, sessions: list[str | None], around: list[uuid.UUID] | None = None
) -> None:
    from engram.service.writes import refresh_sessions

    await refresh_sessions(engram, conn, tenant_id, sessions, around)
