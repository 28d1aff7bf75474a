"""Rescan (SPEC 4.5): the tenant's current admission policy applied again to its active memories, a batch
at a time, newest first, resumable from the cursor each batch returns. A memory's secrets are redacted and
its personal data masked (a new revision, embedded again); one that the policy would now quarantine or
refuse is quarantined, with the reasons, for a reviewer. Nothing is deleted, and nothing is merged or held."""

from __future__ import annotations

from engram.errors import ValidationError
from engram.model import MemoryInput
from engram.model.access import Action, Principal
from engram.model.admission import Admitted
from engram.model.decision import Admission
from engram.model.wire import RescanReport
from engram.policy import admit
from engram.service import pii
from engram.service.admission import ADMITTED_FIELDS, policy_of
from engram.service.core import Core
from engram.store import embeddings as emb
from engram.store import listing
from engram.store import memories as q


def _changes(item: MemoryInput, admitted: MemoryInput) -> dict[str, object]:
    return {n: getattr(admitted, n) for n in ADMITTED_FIELDS if getattr(admitted, n) != getattr(item, n)}


async def rescan_batch(engram: Core, who: Principal, batch: int, cursor: str | None) -> RescanReport:
    who.require(Action.MANAGE_TENANT)
    if not 1 <= batch <= 500:
        raise ValidationError("batch must be between 1 and 500", field="batch")
    tenant_id = who.tenant_id
    policy = await policy_of(engram, tenant_id)
    redacted = quarantined = masked = 0
    journal = q.Journal()
    async with engram.db.tenant(tenant_id) as conn:
        page, next_cursor = await listing.list_page(
            conn, tenant_id, filters={"status": "active"}, tags=(), limit=batch, cursor=cursor
        )
        for memory in page:
            item = MemoryInput.model_validate(memory.model_dump(include=set(ADMITTED_FIELDS)))
            admitted, admission = admit(item, policy)
            if admission.decision != "reject":
                done, refused = await pii.mask_items(engram, tenant_id, policy, [Admitted(0, admitted, admission)])
                if refused:
                    admission = _refusal(refused[0], admission)
                else:
                    admitted, admission = done[0].item, done[0].admission
            cols: dict[str, object] = {}
            if admission.decision in ("quarantine", "reject"):
                cols.update(status="quarantined", admission=admission.model_dump(mode="json"))
                quarantined += 1
            changed = _changes(item, admitted)
            if any(r.check in ("secrets", "pii") for r in admission.reasons) and changed:
                cols.update(changed)
                kept = sorted({*memory.admission.masked, *admission.masked})
                cols.setdefault("admission", admission.model_copy(update={"masked": kept}).model_dump(mode="json"))
                redacted += any(r.check == "secrets" for r in admission.reasons)
                masked += any(r.check == "pii" for r in admission.reasons)
            if not cols:
                continue
            columns = q.patch_columns(cols)
            if "content" in columns:
                columns["content_hash"] = item.model_copy(update={"content": columns["content"]}).content_hash
            await q.update(conn, tenant_id, memory.id, columns)
            if "content" in columns:  # the old vectors were computed from the secret
                await conn.execute(emb.DROP_VECTORS, [tenant_id, memory.id])
                if engram.gateway is not None:
                    await emb.enqueue(conn, tenant_id, engram.gateway.model_id, [memory.id], "rescan_redacted")
            journal.record(memory.id, "updated", "memory.rescanned", {"admission": admission.codes})
        await journal.flush(conn, tenant_id, who.actor)
    if redacted or masked:
        engram.work_pending.set()
    return RescanReport(
        scanned=len(page), redacted=redacted, masked=masked, quarantined=quarantined, next_cursor=next_cursor
    )


def _refusal(error: Exception, admission: Admission) -> Admission:
    """A memory the policy now refuses for its personal data: quarantined with that reason."""
    found = getattr(error, "admission", None)
    return Admission.model_validate(found) if isinstance(found, dict) else admission


class Rescans(Core):
    async def rescan(
        self,
        *,
        batch: int = 200,
        cursor: str | None = None,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> RescanReport:
        """Apply the tenant's current admission policy to one batch of its active memories (admin); call
        again with ``next_cursor`` until it is None."""
        return await rescan_batch(self, self._who(tenant, principal), batch, cursor)
