"""The admission stage of the write path (SPEC 4.5): ordered checks over one memory, each giving reasons, and
the strictest decision among them. Pure: no I/O, the tenant's policy is an argument.

Order: sanitise (so every later check and the content hash see the visible text), value (filler, low
confidence), secrets (redacted before anything reads the text again), injection, impact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from engram.model.admission import AdmissionPolicy
from engram.model.decision import SEVERITY, Admission, Decision, Reason
from engram.model.memory import MemoryInput
from engram.model.text import has_text, normalise_whitespace
from engram.policy import impact, value
from engram.policy.injection import find_injection
from engram.policy.sanitize import sanitize, strip_invisible
from engram.policy.secrets import find_secrets, redact


def admit(item: MemoryInput, policy: AdmissionPolicy) -> tuple[MemoryInput, Admission]:
    """The item as it may be stored, and the decision with its reasons."""
    reasons: list[Reason] = []
    clean = sanitize(item.content)
    changes: dict[str, Any] = {}
    if clean.reasons:
        reasons += [Reason(code=c, check="sanitize", decision="admit", field="content") for c in clean.reasons]
        changes["content"] = clean.text
    if item.summary is not None and strip_invisible(item.summary) != item.summary:
        changes["summary"] = normalise_whitespace(strip_invisible(item.summary)) or None
    content = clean.text
    if not has_text(content):
        reasons.append(Reason(code="empty_after_sanitizing", check="sanitize", decision="reject", field="content",
                              detail="no visible text is left once hidden text and markup are taken out"))  # fmt: skip
        return item, _decide(reasons)

    reasons += _value(item, content, policy)
    redacted, secret_reasons = _secrets(item, content, changes.get("summary", item.summary), policy)
    reasons += secret_reasons
    changes.update(redacted)
    content = changes.get("content", content)
    injected = list(_injection(content, clean.hidden, changes.get("summary", item.summary), policy))
    if injected:
        # A reviewer should see an injection attempt, even one whose visible text alone is filler.
        reasons = [r for r in reasons if r.check != "value"]
    reasons += injected
    reasons += _impact(item, content, policy)
    admitted = item.model_copy(update=changes) if changes else item
    return admitted, _decide(reasons)


def _decide(reasons: list[Reason]) -> Admission:
    decision: Decision = max((r.decision for r in reasons), key=SEVERITY.index, default="admit")
    return Admission(decision=decision, reasons=reasons)


def _value(item: MemoryInput, content: str, policy: AdmissionPolicy) -> Iterator[Reason]:
    if policy.filler == "reject":
        if value.has_no_words(content):
            yield Reason(code="no_words", check="value", decision="reject", field="content",
                         detail="punctuation, symbols or emoji only")  # fmt: skip
        elif value.is_filler(content):
            yield Reason(code="chat_filler", check="value", decision="reject", field="content",
                         detail="greetings, thanks or acknowledgements only")  # fmt: skip
        elif item.source.type == "tool_result" and value.is_repetitive(content):
            yield Reason(code="repeated_tool_output", check="value", decision="reject", field="content",
                         detail="most lines of the tool output repeat")  # fmt: skip
    if item.kind == "semantic" and item.confidence < policy.min_semantic_confidence:
        yield Reason(code="low_confidence", check="value", decision="reject", field="confidence",
                     detail=f"semantic memory needs confidence >= {policy.min_semantic_confidence}, "
                     f"got {item.confidence}")  # fmt: skip


def _secrets(
    item: MemoryInput, content: str, summary: str | None, policy: AdmissionPolicy
) -> tuple[dict[str, Any], list[Reason]]:
    """Every text field scanned; what may be redacted is, per policy; what may not is refused."""
    changes: dict[str, Any] = {}
    reasons: list[Reason] = []
    on_find: Decision = "admit_redacted" if policy.secrets == "redact" else "reject"
    code = "secret_redacted" if policy.secrets == "redact" else "secret"

    def scan(field: str, text: str | None, redactable: bool = True) -> str | None:
        if text is None:
            return None
        found = find_secrets(text)
        if not found:
            return text
        kinds = ", ".join(sorted({f.kind for f in found}))
        decision = on_find if redactable else "reject"
        reasons.append(Reason(code=code if redactable else "secret", check="secrets", decision=decision,
                              field=field, detail=kinds))  # fmt: skip
        return redact(text, found)

    new_content = scan("content", content)
    if new_content != content:
        changes["content"] = normalise_whitespace(new_content or "")
    new_summary = scan("summary", summary)
    if new_summary != summary:
        changes["summary"] = new_summary
    tags = [scan(f"tags[{i}]", t) or t for i, t in enumerate(item.tags)]
    if tags != item.tags:
        # A tag is a label, short: a redacted one would be a useless label, so it is dropped.
        changes["tags"] = [t for t, old in zip(tags, item.tags, strict=True) if t == old]
    if item.source.ref is not None:
        ref = scan("source.ref", item.source.ref)
        if ref != item.source.ref:
            changes["source"] = item.source.model_copy(update={"ref": ref})
    scan("external_id", item.external_id, redactable=False)
    metadata = _scan_json(item.metadata, "metadata", scan)
    if metadata != item.metadata:
        changes["metadata"] = metadata
    return changes, reasons


def _scan_json(value: Any, path: str, scan: Callable[..., str | None]) -> Any:
    if isinstance(value, dict):
        for k in value:
            scan(f"{path} (a key)", k, False)
        return {k: _scan_json(v, f"{path}.{k}", scan) for k, v in value.items()}
    if isinstance(value, list):
        return [_scan_json(v, f"{path}[{i}]", scan) for i, v in enumerate(value)]
    if isinstance(value, str):
        return scan(path, value)
    return value


def _injection(content: str, hidden: list[str], summary: str | None, policy: AdmissionPolicy) -> Iterator[Reason]:
    decision: Decision = "quarantine" if policy.injection == "quarantine" else "reject"
    seen: set[str] = set()
    for field, text, held in (("content", content, hidden), ("summary", summary, [])):
        if text is None:
            continue
        for f in find_injection(text, held):
            code = f"injection_{f.code}" if f.where == "content" else f"injection_{f.where}_{f.code}"
            if code in seen:
                continue
            seen.add(code)
            # Hidden text is not stored, and a secret in it must not reach the reasons either.
            detail = redact(f.excerpt, find_secrets(f.excerpt))
            yield Reason(code=code, check="injection", decision=decision, field=field, detail=detail)


def _impact(item: MemoryInput, content: str, policy: AdmissionPolicy) -> Iterator[Reason]:
    if policy.approval == "off" or item.source.type in policy.trusted_sources:
        return
    if item.visibility == "system":
        yield Reason(code="high_impact_visibility", check="impact", decision="hold", field="visibility",
                     detail="visibility system reaches every caller of the tenant")  # fmt: skip
    if item.importance > policy.approval_importance:
        yield Reason(code="high_impact_importance", check="impact", decision="hold", field="importance",
                     detail=f"importance {item.importance} > {policy.approval_importance}")  # fmt: skip
    for category in impact.categories(content):
        if category in policy.approval_categories:
            yield Reason(code=f"high_impact_{category}", check="impact", decision="hold", field="content")
