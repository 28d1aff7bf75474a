"""Recall's second stage: from what ``gather`` read to the ranked candidates, and whether to abstain.

Pure: no I/O. Fusion (``fusion.fuse``), the relevance floor, expansion along relations, the utility score
with the sources' trust, the abstention gate, MMR and the ordering of disagreeing items
(``conflicts.resolve``), over what gather read for it (``Evidence``).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from engram.retrieval.config import RetrievalConfig
from engram.retrieval.conflicts import resolve
from engram.retrieval.fusion import Candidate, by_score, collect, fuse, mmr, utility
from engram.retrieval.retrievers.base import Cosines, Hit, Relation, Row

CONFLICT_REACH = 5  # items beyond max_items looked at for disagreements (one may move up past another)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What gather read for one recall, as ranking takes it. What only some configurations use (relations,
    vectors) or some tenants have (contradictions) is read only then, for every candidate: ranking decides
    which of them it looks at."""

    lists: Mapping[str, Sequence[Hit]]  # each retriever's hits, best first
    late_cosines: Mapping[uuid.UUID, Cosines] = field(default_factory=dict)  # of rows read without the vector
    has_vector: bool = False  # the query vector was known (its cosines were read; MMR may run)
    lexical: bool = True  # the lexical retriever answered (configured, or recall degraded to it)
    names_unknown: float | None = None  # the share of the query's names no memory holds (None: no names)
    named_speakers: Sequence[str] = ()
    source_trust: Mapping[str, float] = field(default_factory=dict)
    relations: Sequence[Relation] = ()  # of the candidates (``expand_relations``)
    neighbours: Mapping[uuid.UUID, Row] = field(default_factory=dict)  # visible memories those lead to
    vectors: Mapping[uuid.UUID, np.ndarray[Any, Any]] = field(default_factory=dict)  # own vectors (``mmr``)
    contradictions: Collection[frozenset[uuid.UUID]] = ()  # pairs a "contradicts" relation joins


@dataclass(frozen=True, slots=True)
class Ranked:
    candidates: list[Candidate]  # best first, as far as the packet can reach (4 x max_items)
    abstain: bool  # nothing relevant (or the question is about something the tenant does not know)


def rank(evidence: Evidence, cfg: RetrievalConfig, *, at: datetime, max_items: int) -> Ranked:
    """The candidates ranked for a packet of ``max_items``, at time ``at`` (recency), and whether to abstain."""
    ev = evidence
    cands = collect(ev.lists, ev.late_cosines)
    effective = cfg if ev.lexical == cfg.lexical else cfg.model_copy(update={"lexical": True})
    fuse(cands, effective, named_speakers=ev.named_speakers)
    if cfg.expand_relations and cands:
        cands += expand(cands, ev.relations, ev.neighbours, cfg, max_items)
    utility(cands, cfg, at, ev.source_trust)
    ranked = by_score([c for c in cands if c.relevant])
    if ranked and out_of_reach(cands, ev.names_unknown, cfg):
        ranked = []
    reach = max_items * 4  # as far as the packet can reach
    if cfg.mmr and ranked and ev.has_vector:
        vectors = {c.id: ev.vectors[c.id] for c in ranked[:reach] if c.id in ev.vectors}
        ranked = mmr(ranked, vectors, cfg.mmr_lambda, max_items)
    top = ranked[:reach]
    head = min(len(top), max_items + CONFLICT_REACH)
    top[:head] = resolve(top[:head], ev.contradictions)
    return Ranked(top, abstain=not ranked)


def expand(
    cands: list[Candidate],
    relations: Sequence[Relation],
    neighbours: Mapping[uuid.UUID, Row],
    cfg: RetrievalConfig,
    k: int,
) -> list[Candidate]:
    """One hop along relations from the current best ``k``: a neighbour inherits a decayed share of the
    score (added to it when it is a candidate already); the new candidates are returned."""
    top = sorted((c for c in cands if c.relevant), key=lambda c: -c.fused)[:k]
    by_id = {c.id: c for c in top}
    offers: dict[uuid.UUID, tuple[float, str]] = {}
    for r in relations:
        for here, there in ((r.src_id, r.dst_id), (r.dst_id, r.src_id)):
            if here in by_id and there not in by_id:
                value = by_id[here].fused * float(r.weight) * cfg.relation_decay
                if value > offers.get(there, (0.0, ""))[0]:
                    offers[there] = (value, f"related:{r.type}:{here}")
    existing = {c.id: c for c in cands}
    added: list[Candidate] = []
    for mid, (value, reason) in offers.items():
        c = existing.get(mid)
        if c is not None:  # already a candidate (perhaps a weak one): the edge adds to its score
            c.fused += value
            c.ranks["relation"] = 1
            c.signals["relation"] = value
            c.reasons.append(reason)
        elif mid in neighbours:  # one the caller may see
            c = Candidate(mid, neighbours[mid], ranks={"relation": 1}, reasons=[reason], fused=value)
            c.signals["relation"] = value
            added.append(c)
    return added


def out_of_reach(cands: list[Candidate], unknown: float | None, cfg: RetrievalConfig) -> bool:
    """The names the query mentions are unknown to the tenant, nothing is close in meaning and no identifier
    matched: a question about someone or something it knows nothing of (abstain rather than offer what
    merely shares a word)."""
    if unknown is None or unknown < cfg.abstain_unknown_names or any("identifier" in c.ranks for c in cands):
        return False
    closest = max(
        (max(c.signals.get("cos_self", -1.0), c.signals.get("cos_context", -1.0)) for c in cands), default=-1.0
    )
    return closest < cfg.abstain_similarity
