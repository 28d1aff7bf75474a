"""Reads: memories, their history, recall and its receipts, each under the one visibility rule."""

from __future__ import annotations

import asyncio
import builtins
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engram.errors import NotFoundError, ValidationError
from engram.model import HistoryEntry, Memory, MemoryPage
from engram.model.access import Action, Principal
from engram.model.ids import parse_uuid
from engram.model.recall import RecallRequest, RecallResult, Receipt
from engram.model.validation import parse
from engram.policy import without_secrets
from engram.providers.base import Vector, unit
from engram.retrieval import receipts
from engram.retrieval.config import RetrievalConfig
from engram.service import pii
from engram.service.admission import policy_of
from engram.service.changes import not_found, sees
from engram.service.core import Core, _uuid
from engram.store import listing
from engram.store import memories as q


class Reads(Core):
    async def get(
        self,
        memory_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
        reveal: bool = False,
    ) -> Memory:
        """One memory. ``user_id``, ``agent_id``, ``workflow_id``: whom an agent reads it as (a ``user``
        memory shows only to its user, see docs/security.md). ``reveal``: personal data in place of its
        placeholders (admins, or keys created with can_reveal; each reveal is audited)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        if reveal:
            who.require(Action.REVEAL_PII)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        mid = _uuid(memory_id)
        async with self.db.tenant(who.tenant_id) as conn:
            mem = await q.fetch_one(conn, who.tenant_id, mid)
        if mem is None or not sees(who, acting, mem):
            raise not_found(mid)
        return (await self._revealed(who, [mem]))[0] if reveal else mem

    async def _revealed(self, who: Principal, memories: Sequence[Memory]) -> builtins.list[Memory]:
        wanted = sorted({p for m in memories for p in m.admission.masked})
        if not wanted:
            return builtins.list(memories)
        values = await pii.values_of(self, who.tenant_id, wanted)
        events = [("pii_revealed", m.id, {"placeholders": m.admission.masked}) for m in memories if m.admission.masked]
        async with self.db.tenant(who.tenant_id) as conn:
            await q.write_audit(conn, who.tenant_id, who.actor, events)
        return [pii.revealed(m, values) for m in memories]

    async def list(
        self,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        limit: int = 50,
        cursor: str | None = None,
        tags: Sequence[str] = (),
        reveal: bool = False,
        contains: str | None = None,
        **filters: str | None,
    ) -> MemoryPage:
        """Memories newest first, filtered by any of kind, status, user_id, agent_id, workflow_id,
        session_id, fact_key, external_id, tags and ``contains`` (text in the content, any case; all must
        match); an agent sees only what it may (its
        user_id, agent_id and workflow_id filters are also whom it acts as)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        if reveal:
            who.require(Action.REVEAL_PII)
        unknown = set(filters) - set(listing.LIST_FILTERS)
        if unknown:
            raise ValidationError(
                f"unknown filter {sorted(unknown)[0]!r}; allowed: {', '.join(listing.LIST_FILTERS)}, tags",
                field=sorted(unknown)[0],
            )
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        clean = {k: v for k, v in filters.items() if v is not None}
        for name in ("user_id", "agent_id"):
            if name in clean:
                who.bound(clean[name], name)
        acting = None
        if not who.sees_all:
            acting = who.acting(
                user_id=clean.get("user_id"), agent_id=clean.get("agent_id"), workflow_id=clean.get("workflow_id")
            )
        async with self.db.tenant(who.tenant_id) as conn:
            items, next_cursor = await listing.list_page(
                conn,
                who.tenant_id,
                filters=clean,
                tags=tags,
                limit=limit,
                cursor=cursor,
                acting=acting,
                contains=contains or None,
            )
        if reveal:
            items = await self._revealed(who, items)
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def history(
        self,
        memory_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> builtins.list[HistoryEntry]:
        """Every revision of a memory the caller may see, as full snapshots."""
        who = self._who(tenant, principal)
        mem = await self.get(memory_id, principal=who, user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        async with self.db.tenant(who.tenant_id) as conn:
            return await listing.history(conn, who.tenant_id, mem.id)

    async def recall(
        self,
        query: str | RecallRequest | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        config: RetrievalConfig | None = None,
        query_vector: Sequence[float] | Vector | None = None,
        **fields: Any,
    ) -> RecallResult:
        """The few memories that should enter the model's context, as items and a prompt packet, with a
        stored receipt. ``config`` replaces the named preset; ``query_vector`` skips embedding the query
        (a flat list of the embedder's dimensions, taken at unit length)."""
        who = self._who(tenant, principal, actor)
        who.require(Action.READ)
        await self.follow_reads()
        data: Any = {"query": query, **fields} if isinstance(query, str) else query
        req = parse(RecallRequest, data)
        user, agent = who.bound(req.user_id, "user_id"), who.bound(req.agent_id, "agent_id")
        if (user, agent) != (req.user_id, req.agent_id):
            req = req.model_copy(update={"user_id": user, "agent_id": agent})
        # A secret in a query would reach the embedder and the receipt; stored memories hold it redacted.
        query_text, metadata = without_secrets(req.query), without_secrets(req.metadata)
        # Personal data as the tenant's placeholders: it matches what was stored, and stays out of the receipt.
        query_text = await pii.mask_query(self, who.tenant_id, await policy_of(self, who.tenant_id), query_text)
        if (query_text, metadata) != (req.query, req.metadata):
            req = req.model_copy(update={"query": query_text, "metadata": metadata})
        vector = self._query_vector(query_vector) if query_vector is not None else None
        return await self.retriever.recall(who.tenant_id, req, who=who, config=config, query_vector=vector)

    def _query_vector(self, given: Sequence[float] | Vector) -> Vector:
        """A caller's query vector, checked against the embedder and scaled to unit length as stored vectors
        are (exact scans score by inner product, ``retrievers.dense``)."""
        vector = np.asarray(given, dtype=np.float32)
        dims = self.gateway.dimensions if self.gateway is not None else None
        if vector.ndim != 1 or (dims is not None and len(vector) != dims):
            wanted = f"{dims} numbers" if dims is not None else "numbers"
            raise ValidationError(
                f"query_vector must be a flat list of {wanted}, got shape {list(vector.shape)}", field="query_vector"
            )
        if not np.isfinite(vector).all():
            raise ValidationError("query_vector must hold finite numbers only", field="query_vector")
        return unit(vector[None])[0]

    async def receipt(
        self,
        receipt_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        user_id: str | None = None,
    ) -> Receipt:
        """A recall's receipt. An agent reads only those of the user it acts as (``user_id``)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        acting = who.acting(user_id=user_id)
        rid = parse_uuid(receipt_id, field="receipt_id", what="receipt id")
        await self.retriever.receipts.settle()  # this process's recalls: written before they are read
        found = await self._read_receipt(who.tenant_id, rid)
        while found is None and _just_issued(rid):  # another process's recall: its receipt is on its way
            await asyncio.sleep(0.05)
            found = await self._read_receipt(who.tenant_id, rid)
        if found is not None and not (who.reads_all_receipts or found.principal.get("user_id") == acting.user_id):
            await asyncio.sleep(_wait_left(rid))  # answer as late as for an id that is not there
            found = None
        if found is None:
            raise NotFoundError(
                f"receipt {rid} does not exist in this tenant (or is not one of the user this key acts as)",
                field="receipt_id",
            )
        return found

    async def _read_receipt(self, tenant_id: str, rid: uuid.UUID) -> Receipt | None:
        async with self.db.tenant(tenant_id) as conn:
            return await receipts.get(conn, tenant_id, rid)

    async def receipts_for(
        self,
        memory_id: uuid.UUID | str,
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
        limit: int = 50,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> builtins.list[Receipt]:
        """The recalls that put this memory into a packet, newest first ("why was this used"). An agent sees
        only the recalls of the user it acts as."""
        who = self._who(tenant, principal)
        mem = await self.get(memory_id, principal=who, user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        only_user = not who.reads_all_receipts
        acting_user = who.acting(user_id=user_id).user_id
        await self.retriever.receipts.settle()
        async with self.db.tenant(who.tenant_id) as conn:
            return await receipts.for_memory(conn, who.tenant_id, mem.id, limit, only_user=only_user, user=acting_user)


RECEIPT_WAIT = 2.0  # seconds a just-issued receipt id may take to arrive from the process that issued it
CLOCK_SKEW = 0.25  # seconds another process's clock may be ahead of this one's


def _wait_left(rid: uuid.UUID) -> float:
    """How long an unknown just-issued id is waited for still: a refusal takes as long, so its timing does
    not tell that the receipt exists."""
    return max(0.0, RECEIPT_WAIT - (time.time() - (rid.int >> 80) / 1000)) if _just_issued(rid) else 0.0


def _just_issued(rid: uuid.UUID) -> bool:
    """A UUIDv7 issued less than RECEIPT_WAIT seconds ago (its first 48 bits are its Unix time in ms); one
    from the future was never issued by anybody, and is not waited for."""
    age = time.time() - (rid.int >> 80) / 1000
    return rid.version == 7 and -CLOCK_SKEW <= age < RECEIPT_WAIT
