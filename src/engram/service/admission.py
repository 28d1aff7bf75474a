"""Admission as service operations: a tenant's policy (read by every write, cached for a few seconds, changed
by its admins) and the decision applied to the items of a write."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from engram.errors import EngramError, PolicyRejection
from engram.model.access import Action, Principal
from engram.model.admission import PROFILES, AdmissionPolicy, AdmissionPolicyPatch, Admitted, apply_patch
from engram.model.decision import Admission, Decision, Reason
from engram.model.memory import Memory, MemoryInput
from engram.model.validation import parse
from engram.policy import admit, names
from engram.policy.classifier import classifier
from engram.providers.base import Vector
from engram.service.core import Core
from engram.store import tenants


async def policy_of(engram: Core, tenant_id: str) -> AdmissionPolicy:
    found = engram.policies.get(tenant_id)
    if found is None:
        async with engram.db.tenant(tenant_id) as conn:
            stored = await tenants.admission_policy(conn, tenant_id)
        found = AdmissionPolicy.model_validate(stored) if stored else PROFILES["default"]
        engram.policies.put(tenant_id, found)
    return found


def admit_items(
    policy: AdmissionPolicy, items: Sequence[tuple[int, MemoryInput]]
) -> tuple[list[Admitted], dict[int, EngramError]]:
    """Each item through the tenant's policy: the admitted ones (maybe redacted, held or quarantined), and a
    PolicyRejection for each refused one, by index."""
    admitted: list[Admitted] = []
    refused: dict[int, EngramError] = {}
    for index, item in items:
        clean, admission = admit(item, policy)
        if admission.decision == "reject":
            refused[index] = rejection(admission)
        else:
            admitted.append(Admitted(index, clean, admission))
    return admitted, refused


def screen_vectors(
    policy: AdmissionPolicy, items: Sequence[Admitted], vectors: Mapping[str, Vector], model_id: str | None
) -> tuple[list[Admitted], dict[int, EngramError]]:
    """The injection classifier over each admitted item's vector (``policy.classifier``), when the vector
    comes from the model it was trained on: a flagged item is quarantined or refused like a rule's find."""
    found = classifier()
    if not policy.injection_classifier or found is None or model_id != found.model_id:
        return list(items), {}
    kept: list[Admitted] = []
    refused: dict[int, EngramError] = {}
    for a in items:
        vector = vectors.get(a.item.content_hash)
        if a.admission.status != "active" or vector is None or not found.flags(vector):
            kept.append(a)
            continue
        decision: Decision = "quarantine" if policy.injection == "quarantine" else "reject"
        reason = Reason(
            code="injection_classifier", check="injection", decision=decision, field="content",
            detail=f"score {found.score(vector):.2f} > {found.threshold:.2f}",
        )  # fmt: skip
        admission = Admission(decision=decision, reasons=[*a.admission.reasons, reason])
        if decision == "reject":
            refused[a.index] = rejection(admission)
        else:
            kept.append(Admitted(a.index, a.item, admission))
    return kept, refused


# What admission reads of a memory: the fields a write sets, less the times (an old memory's validity window
# need not hold today).
ADMITTED_FIELDS = (
    "content", "summary", "kind", "subtype", "visibility", "source", "confidence", "importance", "tags", "metadata",
    "external_id", "fact_key", "policy", "user_id", "agent_id", "workflow_id", "session_id",
)  # fmt: skip


async def admit_patch(engram: Core, tenant_id: str, current: Memory, changes: dict[str, Any]) -> dict[str, Any]:
    """An update as admission leaves it: the changed fields sanitised or redacted, and ``status`` and
    ``admission`` when the memory as changed is held or quarantined. PolicyRejection when it is refused."""
    merged = {**current.model_dump(include=set(ADMITTED_FIELDS)), **changes}
    item = MemoryInput.model_validate({k: v for k, v in merged.items() if k in ADMITTED_FIELDS})
    from engram.service import pii  # it builds on this module

    policy = await policy_of(engram, tenant_id)
    clean, admission = admit(item, policy)
    if admission.decision == "reject":
        raise rejection(admission)
    masked, refused = await pii.mask_items(engram, tenant_id, policy, [Admitted(0, clean, admission)])
    if refused:
        raise refused[0]
    clean, admission = masked[0].item, masked[0].admission
    kept = sorted({*current.admission.masked, *admission.masked})  # placeholders the unchanged fields hold
    if kept != admission.masked:
        admission = admission.model_copy(update={"masked": kept})
    out = {name: getattr(clean, name) if name in ADMITTED_FIELDS else value for name, value in changes.items()}
    if clean.policy.contains_pii and "policy" not in out:
        out["policy"] = clean.policy
    if admission.status != "active" and current.status == "active":
        out["status"] = admission.status
    if admission.reasons or admission.masked:
        out["admission"] = admission.model_dump(mode="json")
    return out


def rejection(admission: Admission) -> PolicyRejection:
    first = next(r for r in admission.reasons if r.decision == "reject")
    return PolicyRejection(
        f"the admission policy refused this memory: {first.code}" + (f" ({first.detail})" if first.detail else ""),
        reasons=admission.codes,
        field=first.field,
        admission=admission.model_dump(mode="json"),
    )


class Admissions(Core):
    """The tenant's admission policy, as operations of Engram."""

    async def warm(self) -> None:
        """Load the admission models (the NER, the injection classifier) now, as a server starts, rather than
        in the first write that needs them."""
        await asyncio.to_thread(names.warm)
        await asyncio.to_thread(classifier)

    async def admission_policy(
        self, *, tenant: str | None = None, principal: Principal | None = None
    ) -> AdmissionPolicy:
        """The policy every write of the tenant passes (any role may read it)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        return await policy_of(self, who.tenant_id)

    async def update_admission_policy(
        self,
        patch: AdmissionPolicyPatch | Mapping[str, Any],
        *,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> AdmissionPolicy:
        """Change the tenant's admission policy (admin). Writes follow it at once in this process, within
        a few seconds in others; stored memories keep their decisions (``rescan`` applies a new policy)."""
        who = self._who(tenant, principal)
        who.require(Action.MANAGE_TENANT)
        current = await policy_of(self, who.tenant_id)
        new = apply_patch(current, parse(AdmissionPolicyPatch, patch))
        async with self.db.tenant(who.tenant_id) as conn:
            await tenants.set_admission_policy(conn, who.tenant_id, new.model_dump(mode="json"))
        self.policies.put(who.tenant_id, new)
        return new
