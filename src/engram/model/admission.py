"""Admission (SPEC 4.5): a tenant's policy, and an item of a write with the decision it got."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from engram.model.decision import Admission
from engram.model.memory import Kind, MemoryInput, SourceType
from engram.model.rules import Input

PiiKind = Literal["email", "phone", "card", "iban", "national_id", "ip", "person"]
ALL_PII: list[PiiKind] = ["email", "phone", "card", "iban", "national_id", "ip", "person"]


@dataclass(frozen=True)
class Admitted:
    """An item of a write as admission leaves it: sanitised, maybe redacted, with its decision."""

    index: int
    item: MemoryInput
    admission: Admission


Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class AdmissionPolicy(Input):
    """A tenant's admission policy (``GET/PATCH /v1/policy``, ``engram policy``); docs/admission.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: Literal["default", "transcript"] = Field(
        default="default",
        description="A named set of defaults: `transcript` for raw conversation turns (filler, low confidence "
        "and high-impact categories admitted, repeats kept, injection rules without the classifier, speakers' "
        "names kept; secrets redacted, other personal data masked)",
    )
    secrets: Literal["redact", "reject"] = Field(
        default="redact", description="A secret in content, summary, tags, metadata or source.ref is replaced "
        "by [REDACTED:kind] (`redact`) or the memory is refused (`reject`); a secret in external_id or a "
        "metadata key is always refused"
    )  # fmt: skip
    injection: Literal["quarantine", "reject"] = Field(
        default="quarantine", description="Text aimed at the model: stored quarantined (never recalled) or refused"
    )
    filler: Literal["reject", "admit"] = Field(
        default="reject", description="Chat filler, punctuation only, repeated tool output"
    )
    min_semantic_confidence: Share = Field(
        default=0.75, description="Semantic memories below this confidence are refused"
    )
    approval: Literal["high_impact", "off"] = Field(
        default="high_impact",
        description="Hold high-impact memories (visibility system, importance above approval_importance, or an "
        "approval category) as pending_approval",
    )
    approval_importance: Share = Field(default=0.9, description="Importance above which a memory is held")
    approval_categories: list[
        Literal["payment_instructions", "bank_details", "medical_details", "permission_change"]
    ] = Field(
        default=["payment_instructions", "bank_details", "medical_details", "permission_change"],
        description="Categories held for approval",
    )
    trusted_sources: list[SourceType] = Field(
        default=["system_event"], description="Sources whose high-impact memories are admitted without approval"
    )
    pii: Literal["mask", "reject", "off"] = Field(
        default="mask",
        description="Personal data (pii_kinds) in content, summary, tags, metadata or source.ref: replaced by "
        "placeholders stable per tenant and value (EMAIL_1, PERSON_A) with the values sealed in the vault "
        "(`mask`), refused (`reject`), or stored as written (`off`)",
    )
    pii_kinds: list[PiiKind] = Field(
        default_factory=lambda: list(ALL_PII),
        description="Kinds of personal data looked for (person needs the NER model: the `ner` extra)",
    )
    pii_retention_required: bool = Field(
        default=False,
        description="Refuse a memory holding personal data unless it gives policy.retention_reason",
    )
    injection_classifier: bool = Field(
        default=True,
        description="Also screen each write's vector with the injection classifier (when the vector comes from "
        "the model it was trained on)",
    )
    deduplicate: list[Kind] = Field(
        default=["working", "episodic", "semantic", "procedural"],
        description="Kinds whose repeats (same content, or a near duplicate) in the same scope, kind and "
        "visibility are merged into the stored memory instead of stored again",
    )
    near_duplicate_similarity: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] = Field(
        default=0.95, description="Cosine similarity from which a memory is a near duplicate (1: exact only)"
    )


class AdmissionPolicyPatch(Input):
    """The fields of the policy to change; the rest keep their value. A new `profile` resets the others to
    that profile's defaults first."""

    model_config = ConfigDict(extra="forbid")

    profile: Literal["default", "transcript"] | None = None
    secrets: Literal["redact", "reject"] | None = None
    injection: Literal["quarantine", "reject"] | None = None
    filler: Literal["reject", "admit"] | None = None
    min_semantic_confidence: Share | None = None
    approval: Literal["high_impact", "off"] | None = None
    approval_importance: Share | None = None
    approval_categories: (
        list[Literal["payment_instructions", "bank_details", "medical_details", "permission_change"]] | None
    ) = None
    trusted_sources: list[SourceType] | None = None
    pii: Literal["mask", "reject", "off"] | None = None
    pii_kinds: list[PiiKind] | None = None
    pii_retention_required: bool | None = None
    injection_classifier: bool | None = None
    deduplicate: list[Kind] | None = None
    near_duplicate_similarity: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] | None = None


PROFILES: dict[str, AdmissionPolicy] = {
    "default": AdmissionPolicy(),
    "transcript": AdmissionPolicy(
        profile="transcript",
        filler="admit",
        min_semantic_confidence=0.0,
        approval="off",
        deduplicate=[],
        injection_classifier=False,
        # Turns are full of their speakers' names: masked, who said what is lost (docs/admission.md).
        pii_kinds=[k for k in ALL_PII if k != "person"],
    ),
}


def apply_patch(policy: AdmissionPolicy, patch: AdmissionPolicyPatch) -> AdmissionPolicy:
    changes = patch.model_dump(exclude_none=True)
    base = PROFILES[changes["profile"]] if "profile" in changes else policy
    return AdmissionPolicy.model_validate({**base.model_dump(), **changes})
