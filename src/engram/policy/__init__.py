"""Admission (SPEC 4.5): what the write path lets in, redacts, holds, quarantines or refuses, and why.
Pure code over a memory and its tenant's policy; the service applies the decision."""

from engram.policy.admission import admit
from engram.policy.secrets import without_secrets

__all__ = ["admit", "without_secrets"]
