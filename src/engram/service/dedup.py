"""Deduplication, the last admission step (SPEC 4.5), taken inside the write's transaction: an item that
repeats a stored memory (the same content, or cosine similarity at or above the policy's threshold, in the
same scope, kind and visibility) is merged into it instead of stored again; so is an item that repeats an
earlier item of the same batch. Writers of one scope take a lock first, so racing writers of one text leave
one memory. Merging appends the item's source, keeps the higher confidence and importance (confidence is
evidence quality, not a count of mentions) and joins the tags, in a new revision."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from engram.model import Memory
from engram.model.admission import AdmissionPolicy, Admitted
from engram.model.decision import Admission, Reason
from engram.providers.base import Vector
from engram.store import dedup
from engram.store import memories as q
from engram.store.database import Conn


@dataclass
class Folded:
    """What deduplication left to insert, and the outcomes of the items it merged."""

    to_insert: list[Admitted]
    outcomes: list[q.Outcome]
    # Items repeating an earlier item of the batch: merged into that item's memory once it is stored.
    into_batch: dict[int, tuple[int, float]]


def _probe(a: Admitted, vectors: Mapping[str, Vector]) -> dedup.Probe:
    vector = vectors.get(a.item.content_hash)
    return dedup.Probe(
        ord=a.index, scope=q.scope_key(a.item), kind=a.item.kind, visibility=a.item.visibility,
        content_hash=a.item.content_hash, vector=None if vector is None else np.asarray(vector, dtype=np.float32),
    )  # fmt: skip


# Numbers, dates, ids and capitalised words (names, and a sentence's first word: merging stays cautious).
_ANCHOR = re.compile(r"\w*\d[\w.,:/-]*|\b[A-Z][\w'-]*")


def anchors(text: str) -> set[str]:
    """The numbers, dates, ids and capitalised words of ``text``, without the punctuation that may end them
    ("2027-03-01." is the date 2027-03-01)."""
    return {a.rstrip(".,:/-") for a in _ANCHOR.findall(text)}


def same_anchors(a: str, b: str) -> bool:
    """Whether two texts name the same numbers, dates, ids and names: "Invoice 77 was paid" and "Invoice 78
    was paid" are near in meaning and must stay two memories."""
    return anchors(a) == anchors(b)


def _within_batch(
    eligible: Sequence[Admitted], probes: Mapping[int, dedup.Probe], threshold: float
) -> tuple[dict[int, tuple[int, float]], list[dedup.Probe]]:
    """Items that repeat an earlier item of the batch (later item -> (earlier item, similarity)), and the
    others. Compared within a scope, kind and visibility: the same content, or vectors at or above the
    threshold with the same anchors."""
    into_batch: dict[int, tuple[int, float]] = {}
    kept: list[dedup.Probe] = []
    groups: dict[tuple[str, str, str], _Group] = {}
    for a in eligible:
        p = probes[a.index]
        group = groups.setdefault((p.scope, p.kind, p.visibility), _Group())
        same = group.by_hash.get(p.content_hash)
        if same is not None:
            into_batch[a.index] = (same, 1.0)
            continue
        if p.vector is not None and group.ords:
            unit = p.vector / (float(np.linalg.norm(p.vector)) or 1.0)
            sims = np.stack(group.units) @ unit
            best = int(np.argmax(sims))
            if sims[best] >= threshold and anchors(a.item.content) == group.anchors[best]:
                into_batch[a.index] = (group.ords[best], float(sims[best]))
                continue
        kept.append(p)
        group.by_hash[p.content_hash] = p.ord
        if p.vector is not None:
            group.ords.append(p.ord)
            group.units.append(p.vector / (float(np.linalg.norm(p.vector)) or 1.0))
            group.anchors.append(anchors(a.item.content))
    return into_batch, kept


@dataclass
class _Group:
    """The kept items of one scope, kind and visibility: by content hash, and their unit vectors."""

    by_hash: dict[str, int] = field(default_factory=dict)
    ords: list[int] = field(default_factory=list)
    units: list[np.ndarray[Any, np.dtype[np.float32]]] = field(default_factory=list)
    anchors: list[set[str]] = field(default_factory=list)


async def fold(
    conn: Conn,
    tenant_id: str,
    policy: AdmissionPolicy,
    model: str | None,
    items: Sequence[Admitted],
    vectors: Mapping[str, Vector],
    journal: q.Journal,
    actor: str,
) -> Folded:
    eligible = [
        a for a in items
        if a.item.fact_key is None and a.admission.status == "active" and a.item.kind in policy.deduplicate
    ]  # fmt: skip
    if not eligible:
        return Folded(list(items), [], {})
    threshold = policy.near_duplicate_similarity
    probes = {a.index: _probe(a, vectors) for a in eligible}
    await dedup.lock(conn, tenant_id, list(probes.values()))

    into_batch, kept = _within_batch(eligible, probes, threshold)
    exact = await dedup.exact(conn, tenant_id, kept)
    found: dict[int, tuple[uuid.UUID, Memory | None, float]] = {o: (m.id, m, 1.0) for o, m in exact.items()}
    if model is not None and threshold < 1.0:
        near = await dedup.near(conn, tenant_id, model, [p for p in kept if p.ord not in found], threshold)
        by_ord = {a.index: a for a in eligible}
        found.update(
            {
                o: (mid, None, sim)
                for o, (mid, sim, content) in near.items()
                if same_anchors(by_ord[o].item.content, content)
            }
        )

    by_index = {a.index: a for a in items}
    outcomes: list[q.Outcome] = []
    merged: set[int] = set()
    for index, (target, memory, similarity) in found.items():
        a = by_index[index]
        if memory is not None and _same_write(memory, a):
            outcomes.append(q.Outcome(index, memory.id, False, ["idempotent_replay"], memory=memory))
        else:
            outcomes.append(await merge_into(conn, tenant_id, a, target, similarity, journal, actor))
        merged.add(index)
    # A repeat of an item that itself merged into a stored memory goes to that memory too.
    for later, (earlier, similarity) in list(into_batch.items()):
        if earlier in merged:
            target = next(o.id for o in outcomes if o.index == earlier)
            outcomes.append(await merge_into(conn, tenant_id, by_index[later], target, similarity, journal, actor))
            merged.add(later)
            del into_batch[later]
    rest = [a for a in items if a.index not in merged and a.index not in into_batch]
    return Folded(rest, outcomes, into_batch)


def _same_write(memory: Memory, a: Admitted) -> bool:
    """A retry of the write that stored this memory, or of one merged into it: a replay, not a repeat."""
    ext = a.item.external_id
    if ext is None:
        return False
    if memory.external_id == ext and (memory.agent_id or "") == (a.item.agent_id or ""):
        return True
    return any(s.external_id == ext for s in memory.sources)


async def merge_into(
    conn: Conn, tenant_id: str, a: Admitted, target: uuid.UUID, similarity: float, journal: q.Journal, actor: str
) -> q.Outcome:
    item = a.item
    source = {
        "type": item.source.type, "ref": item.source.ref, "external_id": item.external_id,
        "merged_at": datetime.now(UTC).isoformat(), "similarity": round(similarity, 4),
    }  # fmt: skip
    if journal.pending(target):  # created (or merged into) earlier in this transaction
        await journal.flush(conn, tenant_id, actor)
    memory = await dedup.merge(
        conn, tenant_id, target, confidence=item.confidence, importance=item.importance, tags=item.tags, source=source,
    )  # fmt: skip
    assert memory is not None, "a duplicate found under the scope lock cannot vanish"
    code = "merged_exact_duplicate" if memory.content_hash == item.content_hash else "merged_near_duplicate"
    journal.record(
        memory.id, "merged", "memory.merged", {"similarity": round(similarity, 4), "source": item.source.type}
    )
    return q.Outcome(a.index, memory.id, False, [code], memory=memory, merged=True)


def merged_admission(admission: Admission, out: q.Outcome) -> Admission:
    """The item's admission with the merge decision and its reason."""
    reason = Reason(
        code=out.reasons[0], check="dedup", decision="merge", field="content", detail=f"merged into memory {out.id}"
    )
    return Admission(decision="merge", reasons=[*admission.reasons, reason])
