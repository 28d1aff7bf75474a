"""What the templates show, computed: revision diffs and each retriever's candidates."""

from __future__ import annotations

import difflib
from typing import Any, get_args

from engram.model import HistoryEntry
from engram.model.memory import Kind, Status
from engram.model.recall import Receipt

FILTERS = ("kind", "status", "user_id", "agent_id", "workflow_id", "session_id", "fact_key")
KINDS: tuple[str, ...] = get_args(Kind)
STATUSES: tuple[str, ...] = get_args(Status)
SHOWN_FIELDS = ("kind", "status", "visibility", "fact_key", "importance", "confidence", "tags", "valid_until",
                "expires_at", "superseded_by")  # fmt: skip


def changes(history: list[HistoryEntry]) -> list[dict[str, Any]]:
    """Each revision, newest first, with what it changed from the one before: the content as a line diff and
    the other fields that moved (old -> new)."""
    out: list[dict[str, Any]] = []
    before = None
    for entry in history:
        snap = entry.snapshot
        fields: list[tuple[str, Any, Any]] = []
        if before is not None:
            for name in SHOWN_FIELDS:
                old, new = getattr(before, name), getattr(snap, name)
                if old != new:
                    fields.append((name, old, new))
        out.append({
            "revision": entry.revision, "change": entry.change, "actor": entry.actor, "at": entry.changed_at,
            "content_before": before.content if before is not None else None, "content": snap.content,
            "fields": fields,
        })  # fmt: skip
        before = snap
    return out[::-1]


def diff_lines(change: dict[str, Any]) -> list[tuple[str, str]]:
    """The content's change as (mark, text) lines: '-' removed, '+' added, ' ' kept, by word."""
    if change["content_before"] is None or change["content_before"] == change["content"]:
        return []
    old, new = change["content_before"].split(), change["content"].split()
    out: list[tuple[str, str]] = []
    for tag, a, b, c, d in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append((" ", " ".join(old[a:b])))
        if tag in ("replace", "delete"):
            out.append(("-", " ".join(old[a:b])))
        if tag in ("replace", "insert"):
            out.append(("+", " ".join(new[c:d])))
    return out


def retrievers(receipt: Receipt) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each retriever's candidates in rank order, marked when the recall selected them."""
    chosen = {str(item.get("id")) for item in receipt.selected}
    out = []
    for name, candidates in receipt.retrievers.items():
        rows = [{**c, "id": str(c.get("id")), "selected": str(c.get("id")) in chosen} for c in candidates or []]
        out.append((name, rows))
    return out
