"""Decay (SPEC 6.3), the pure part: a memory's priority, and what the tenant's policy does with it.

    priority = 0.35 * importance + 0.25 * confidence + 0.4 * freshness
    freshness = max(0.5 ** (days since last use / use half-life), 0.5 ** (age in days / age half-life))

(a memory never used has no use term). Importance and confidence are what the writer and the evidence said;
freshness is whichever is more recent of being used and being written, halving with each half-life, so a
memory recalled yesterday stays fresh however old it is. With the defaults (importance 0.5, confidence 0.8)
the floor is 0.375, above the default threshold of 0.3: only memories written as unimportant or doubtful
ever fade out for their priority alone. The rules before it say what ends sooner.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from engram.model.lifecycle import DecayAction, LifecyclePolicy

PINNED_IMPORTANCE = 0.9


@dataclass(frozen=True)
class Facts:
    """What decay looks at of a memory."""

    id: uuid.UUID
    kind: str
    subtype: str | None
    confidence: float
    importance: float
    recorded_at: datetime
    updated_at: datetime
    last_used_at: datetime | None
    contains_pii: bool
    retention_reason: str | None
    expires_at: datetime | None
    source_changed: bool = False  # a newer tool result from the same source exists


def _days(later: datetime, earlier: datetime) -> float:
    return max(0.0, (later - earlier).total_seconds() / 86_400)


def priority(m: Facts, policy: LifecyclePolicy, now: datetime) -> float:
    age = 0.5 ** (_days(now, m.recorded_at) / policy.age_half_life_days)
    used = 0.5 ** (_days(now, m.last_used_at) / policy.use_half_life_days) if m.last_used_at else 0.0
    return round(float(0.35 * m.importance + 0.25 * m.confidence + 0.4 * max(age, used)), 4)


def decide(m: Facts, policy: LifecyclePolicy, now: datetime) -> tuple[DecayAction, str] | None:
    """What happens to an active memory now, and why; None: it stays. Pinned memories are the caller's."""
    if m.expires_at is not None and m.expires_at <= now:
        return "archive", "expired"
    touched = max(m.updated_at, m.last_used_at or m.updated_at)
    last_use = m.last_used_at or m.recorded_at
    if m.kind == "working" and policy.working_idle_days and _days(now, touched) >= policy.working_idle_days:
        return "expire", "working_idle"
    if m.source_changed and policy.tool_results_expire_on_change:
        return "expire", "source_changed"
    if m.contains_pii and policy.sensitive_days and _days(now, m.recorded_at) >= policy.sensitive_days:
        return "expire", "sensitive_ttl"
    if (
        m.subtype == "preference"
        and policy.preference_unused_days
        and (_days(now, last_use) >= policy.preference_unused_days)
    ):
        return "archive", "preference_unused"
    if (
        m.confidence < policy.low_confidence_below
        and policy.low_confidence_unused_days
        and (_days(now, last_use) >= policy.low_confidence_unused_days)
    ):
        return "archive", "low_confidence_unused"
    if _days(now, m.recorded_at) >= policy.min_age_days and priority(m, policy, now) < policy.archive_below:
        return "archive", "low_priority"
    return None


def pinned(m: Facts) -> bool:
    """Kept whatever the rules say: someone gave a reason to retain it, or it matters too much to fade."""
    return m.retention_reason is not None or m.importance >= PINNED_IMPORTANCE
