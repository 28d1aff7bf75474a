"""Fusion and scoring: combine the retrievers' lists, apply the query-time boosts, then the utility score,
optional MMR diversity. Pure functions over candidates (``rank`` composes them); no I/O."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from engram.retrieval.config import RetrievalConfig
from engram.retrieval.retrievers.base import Cosines, Hit, Row


@dataclass(slots=True)
class Candidate:
    """A memory some retriever found (or a relation led to), with what ranking learns of it. Its row is
    the one its retrievers read; ranking writes here, never there."""

    id: uuid.UUID
    row: Row
    ranks: dict[str, int] = field(default_factory=dict)
    signals: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    fused: float = 0.0
    score: float = 0.0
    trust: float = 1.0
    conflicts: list[uuid.UUID] = field(default_factory=list)
    cos_self: float | None = None  # the query's cosines (None: not known, or no such vector)
    cos_context: float | None = None

    @property
    def relevant(self) -> bool:
        """Whether its own evidence clears the floor (``fuse`` sets dense_ok and terms_ok): close enough in
        meaning, or holding enough of the query's informative words; an exact identifier or a relation to
        a relevant memory also counts. One shared name is not enough."""
        ranks, signals = self.ranks, self.signals
        return (
            "identifier" in ranks or "relation" in ranks or signals.get("dense_ok", 0) > 0
            or signals.get("terms_ok", 0) > 0
        )  # fmt: skip


def collect(lists: Mapping[str, Sequence[Hit]], late: Mapping[uuid.UUID, Cosines] | None = None) -> list[Candidate]:
    """One candidate per memory found by any retriever, with its rank and score in each, and the row of the
    first retriever that found it (or of one that read the query's cosines, when that one did not). Its
    cosines come from that row, or from ``late`` (read after it, when the query vector was known)."""
    out: dict[int, Candidate] = {}  # by the uuid's int: a UUID's own hash is computed in Python
    for name, hits in lists.items():
        for rank, hit in enumerate(hits, start=1):
            key = hit.id.int
            row = hit.row
            c = out.get(key)
            if c is None:
                c = out[key] = Candidate(hit.id, row, {}, {}, [])
                if row.scored:
                    c.cos_self, c.cos_context = row.cos_self, row.cos_context
            elif row.scored and not c.row.scored:
                c.row = row
                c.cos_self, c.cos_context = row.cos_self, row.cos_context
            c.ranks[name] = rank
            c.signals[name] = hit.score
            c.reasons.append(f"{name}#{rank}")
            if row.term_share is not None:
                c.signals["term_share"] = row.term_share
    cands = list(out.values())
    if late:
        for c in cands:
            if not c.row.scored and c.id in late:
                c.cos_self, c.cos_context = late[c.id]
    return cands


def fuse(cands: list[Candidate], cfg: RetrievalConfig, *, named_speakers: Sequence[str]) -> None:
    """Set ``fused`` on every candidate (score fusion or RRF), then the speaker and session boosts."""
    w = cfg.weights
    min_share = cfg.min_term_share
    closest: list[tuple[Candidate, float]] = []
    for c in cands:
        if c.signals.get("term_share", 0.0) >= min_share:
            c.signals["terms_ok"] = 1.0
        cos_self = c.cos_self
        if cos_self is not None:
            cos_ctx = c.cos_context
            signals = c.signals
            s_self = signals["cos_self"] = float(cos_self)
            s_ctx = signals["cos_context"] = float(cos_ctx if cos_ctx is not None else cos_self)
            closest.append((c, max(s_self, s_ctx)))
    # Close in meaning: at least min_similarity, and within max_similarity_gap of the best match (far below
    # it, a cosine is the background level of any text, not a sign of relevance).
    nearest = max((s for _, s in closest), default=0.0)
    floor = max(cfg.min_similarity, nearest - cfg.max_similarity_gap)
    for c, s in closest:
        if s >= floor:
            c.signals["dense_ok"] = 1.0
    if cfg.fusion == "rrf":
        weight = {"lexical": w.lexical, "dense": w.dense, "dense_context": w.dense_context, "identifier": w.identifier}
        for c in cands:
            c.fused = sum(weight.get(name, 0.0) / (cfg.rrf_k + rank) for name, rank in c.ranks.items())
    else:
        top_bm25 = max((c.signals.get("lexical", 0.0) for c in cands), default=0.0) or 1.0
        lexical, dense = cfg.lexical, cfg.dense
        w_lexical, w_dense, w_context, w_identifier = w.lexical, w.dense, w.dense_context, w.identifier
        for c in cands:
            signals = c.signals
            s = w_lexical * signals.get("lexical", 0.0) / top_bm25 if lexical else 0.0
            if dense and "cos_self" in signals:
                s += w_dense * signals["cos_self"] + w_context * signals["cos_context"]
            s += w_identifier * signals.get("identifier", 0.0)
            c.fused = s
    if len(named_speakers) == 1 and cfg.speaker_boost != 1.0:
        name = named_speakers[0]
        for c in cands:
            if c.row.speaker == name and c.fused > 0:
                c.fused *= cfg.speaker_boost
                c.reasons.append("speaker_named")
    if cfg.session_boost > 0:
        best: dict[str, float] = {}
        sessions = [(c, c.row.session_id) for c in cands]
        for c, session in sessions:
            if session is not None:
                best[session] = max(best.get(session, 0.0), c.fused)
        boost = cfg.session_boost
        for c, session in sessions:
            if session is not None and best[session] > 0:
                c.fused += boost * best[session]


def utility(cands: list[Candidate], cfg: RetrievalConfig, at: datetime, source_trust: Mapping[str, float]) -> None:
    """Relevance (fused, scaled to 0..1) weighed by reliability (the source's trust prior times the memory's
    confidence), plus recency decay, confidence and importance (weights in cfg): between memories about the
    same thing, the verified one ranks above the guess."""
    u = cfg.utility
    relevance, recency_w, confidence, importance, trust_w = u.relevance, u.recency, u.confidence, u.importance, u.trust
    half_life = u.recency_half_life_days
    top = max((c.fused for c in cands), default=0.0) or 1.0
    for c in cands:
        row = c.row
        age_days = max((at - row.valid_from).total_seconds(), 0.0) / 86400.0
        recency = math.pow(0.5, age_days / half_life)
        c.trust = source_trust.get(row.source_type, 1.0)
        reliability = c.trust * float(row.confidence)
        c.score = (
            relevance * c.fused / top * (1.0 - trust_w + trust_w * reliability)
            + recency_w * recency
            + confidence * float(row.confidence)
            + importance * float(row.importance)
        )
        c.signals["recency"] = recency
        c.signals["reliability"] = reliability


def by_score(cands: list[Candidate]) -> list[Candidate]:
    return sorted(cands, key=lambda c: (-c.score, c.id))  # uuid order is the order of its text


def mmr(
    cands: list[Candidate], vectors: Mapping[uuid.UUID, np.ndarray[Any, Any]], lam: float, k: int
) -> list[Candidate]:
    """Maximal marginal relevance over the ranked list: trade relevance against similarity to what is chosen."""
    pool = list(cands)
    chosen: list[Candidate] = []
    while pool and len(chosen) < k:

        def value(c: Candidate) -> float:
            v = vectors.get(c.id)
            if v is None or not chosen:
                return lam * c.score
            sims = [float(np.dot(v, vectors[o.id])) for o in chosen if o.id in vectors]
            return lam * c.score - (1 - lam) * (max(sims) if sims else 0.0)

        best = max(pool, key=value)
        pool.remove(best)
        if chosen:
            best.reasons.append("mmr")
        chosen.append(best)
    return chosen + pool
