"""The library API: everything else (REST, CLI, MCP, workers) calls this.

>>> async with await Engram.open(tenant="acme") as mem:           # doctest: +SKIP
...     r = await mem.remember("Invoices go out in EUR", kind="semantic", fact_key="invoice_currency")
...     await mem.get(r.id)

Every operation acts for a :class:`~engram.model.access.Principal`: the REST API passes the one its API key
stands for (tenant, role, bound user and agent); in process, without one, the caller is trusted as an admin
of the tenant it names (``tenant=``, or the one Engram was opened with). Authorization is decided here and
nowhere else (docs/security.md). The operations are grouped: reads and recall (``reads``), keys, tenant
settings and upkeep (``admin``), writes and changes here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from engram.errors import EngramError, NotFoundError, ValidationError
from engram.model import Memory, MemoryPatch, WriteResult
from engram.model.access import Action, Principal
from engram.model.forget import DeletionCertificate
from engram.model.recall import Relation, RelationInput
from engram.model.validation import parse
from engram.service import changes
from engram.service.actions import Actions
from engram.service.admin import Administration
from engram.service.admission import Admissions
from engram.service.approvals import Approvals
from engram.service.changes import sees
from engram.service.consolidation import Consolidation
from engram.service.conversations import Conversations
from engram.service.core import _uuid
from engram.service.decay import Decay
from engram.service.extraction import Extractions
from engram.service.forget import Forgetting
from engram.service.procedures import Procedures
from engram.service.reads import Reads
from engram.service.reembed import Reembedding
from engram.service.rescan import Rescans
from engram.service.review import Review
from engram.service.workflows import Workflows
from engram.service.writes import EmbedMode, MemoryLike, remember_many
from engram.store import memories as q
from engram.store import relations


class Engram(
    Actions,
    Procedures,
    Review,
    Reads,
    Administration,
    Admissions,
    Approvals,
    Rescans,
    Extractions,
    Workflows,
    Forgetting,
    Conversations,
    Consolidation,
    Decay,
    Reembedding,
):
    """Durable, typed, tenant-isolated memory. Async; see :class:`engram.sync.EngramSync` for blocking use."""

    async def remember(
        self,
        content: str | MemoryLike,
        *,
        tenant: str | None = None,
        actor: str = "library",
        embed: EmbedMode = "sync",
        principal: Principal | None = None,
        **fields: Any,
    ) -> WriteResult:
        """Write one memory. Raises ValidationError, IdempotencyConflict, ... on failure."""
        item: MemoryLike = {"content": content, **fields} if isinstance(content, str) else content
        who = self._who(tenant, principal, actor)
        result = (await remember_many(self, who, [item], embed, batch=False))[0]
        if isinstance(result, EngramError):
            raise result
        return result

    async def remember_many(
        self,
        items: Sequence[MemoryLike],
        *,
        tenant: str | None = None,
        actor: str = "library",
        embed: EmbedMode = "sync",
        principal: Principal | None = None,
    ) -> list[WriteResult | EngramError]:
        """Write many memories; each item succeeds or fails on its own and gets its own result (an error
        names its field as ``items[i].field``).

        With ``embed="sync"`` vectors are computed before the transaction (never twice for the same content);
        if the embedder fails or times out the memories are still committed and queued for enrichment.
        ``embed="deferred"`` queues them straight away.
        """
        return await remember_many(self, self._who(tenant, principal, actor), items, embed, batch=True)

    async def update(
        self,
        memory_id: uuid.UUID | str,
        patch: MemoryPatch | Mapping[str, Any],
        *,
        expected_revision: int,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Memory:
        """Change fields of a memory. ``expected_revision`` must be its current revision, else
        RevisionConflict (re-read, re-apply, retry): concurrent edits are never lost. A superseded or
        deleted memory cannot change (NotCurrent names the current one)."""
        who = self._who(tenant, principal, actor)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        return await changes.update(self, who, acting, _uuid(memory_id), parse(MemoryPatch, patch), expected_revision)

    async def archive(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Memory:
        """Take a memory out of service, keeping it and its history (idempotent)."""
        who = self._who(tenant, principal, actor)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        return await changes.archive(self, who, acting, _uuid(memory_id), expected_revision)

    async def unarchive(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> Memory:
        """Put an archived memory back in service (reviewer or admin)."""
        who = self._who(tenant, principal, actor)
        return await changes.unarchive(self, who, who.acting(), _uuid(memory_id), expected_revision)

    async def delete(
        self,
        memory_id: uuid.UUID | str,
        *,
        expected_revision: int | None = None,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> DeletionCertificate:
        """Remove a memory with its vectors, postings, history, relations, the memories derived from it and the
        receipts holding copies of it (reviewer or admin); an audit tombstone without content stays, its fact's
        chain is mended (docs/architecture.md), and the deletion certificate says what went (SPEC 6.5)."""
        who = self._who(tenant, principal, actor)
        return await changes.delete(self, who, who.acting(), _uuid(memory_id), expected_revision)

    async def relate(
        self,
        relation: RelationInput | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        workflow_id: str | None = None,
    ) -> Relation:
        """Add (or re-weight) a typed edge between two memories the caller may see (SPEC 8)."""
        who = self._who(tenant, principal, actor)
        who.require(Action.WRITE)
        acting = who.acting(user_id=user_id, agent_id=agent_id, workflow_id=workflow_id)
        rel = parse(RelationInput, relation)
        if rel.src_id == rel.dst_id:
            raise ValidationError("a relation needs two different memories", field="dst_id")
        async with self.db.tenant(who.tenant_id) as conn:
            for name, mid in (("src_id", rel.src_id), ("dst_id", rel.dst_id)):
                mem = await q.fetch_one(conn, who.tenant_id, mid)
                if mem is None or not sees(who, acting, mem):
                    raise NotFoundError(f"memory {mid} does not exist in this tenant", field=name)
            made = await relations.upsert(conn, who.tenant_id, rel)
            await q.write_audit(
                conn,
                who.tenant_id,
                who.actor,
                [("relation.upserted", rel.src_id, {"dst_id": str(rel.dst_id), "type": rel.type})],
            )
        return made
