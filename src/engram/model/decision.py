"""An admission decision (SPEC 4.5) and its reasons: what a write answers and a memory keeps."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Decision = Literal["admit", "admit_redacted", "merge", "hold", "quarantine", "reject"]
# What each decision stores the memory as (a rejected memory is not stored).
STATUS_OF: dict[str, str] = {
    "admit": "active",
    "admit_redacted": "active",
    "merge": "active",
    "hold": "pending_approval",
    "quarantine": "quarantined",
    "reject": "rejected",
}
# When checks disagree, the strictest decision wins.
SEVERITY: tuple[Decision, ...] = ("admit", "admit_redacted", "merge", "hold", "quarantine", "reject")


class Reason(BaseModel):
    """Why admission decided as it did: a stable code, the check that gave it, and where it looked."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="Machine-readable reason, e.g. secret_redacted, injection_override")
    check: str = Field(description="The check that gave it: sanitize, value, secrets, injection, impact")
    decision: Decision = Field(description="What this check alone would decide")
    field: str | None = Field(default=None, description="The field it concerns (content, metadata.note, ...)")
    detail: str | None = Field(default=None, description="For people: what was found (never a secret's value)")


class Admission(BaseModel):
    """The decision on one memory and every reason for it."""

    model_config = ConfigDict(frozen=True)

    decision: Decision = "admit"
    reasons: list[Reason] = Field(default_factory=list)
    masked: list[str] = Field(
        default_factory=list,
        description="Placeholders of personal data in this memory (EMAIL_1, PERSON_A): the values are in the "
        "vault, shown only with reveal",
    )

    @property
    def status(self) -> str:
        return STATUS_OF[self.decision]

    @property
    def codes(self) -> list[str]:
        return [r.code for r in self.reasons]
