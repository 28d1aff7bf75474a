"""Deletion certificates (SPEC 6.5): what forgetting a subject removed, table by table, and a digest that
the tombstone left in the audit trail repeats, so the deletion can be verified later without the data."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime

from pydantic import BaseModel, Field


class DeletionCertificate(BaseModel):
    tenant_id: str
    subject: str = Field(description="What was forgotten: user:<id> (the tombstone does not repeat it)")
    removed: dict[str, int] = Field(description="Rows removed per table (and keys per store outside PostgreSQL)")
    memories: list[uuid.UUID] = Field(description="The memories removed: the subject's and those derived from them")
    caches_cleared: list[str]
    completed_at: datetime
    tombstone_id: uuid.UUID = Field(description="The audit event that records the deletion, without content")
    digest: str = Field(description="sha256 of the tenant, subject, counts and memory ids: the tombstone holds it")


def certificate_digest(tenant_id: str, subject: str, removed: dict[str, int], memories: list[uuid.UUID]) -> str:
    body = {"tenant": tenant_id, "subject": subject, "removed": removed, "memories": sorted(str(m) for m in memories)}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
