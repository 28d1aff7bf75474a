"""Fusion and ranking: combine the retrievers' lists, apply the query-time boosts, then the utility score,
optional MMR diversity. Pure functions over candidates; no I/O."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from engram.retrieval.candidates import Hit
from engram.retrieval.config import RetrievalConfig


@dataclass
class Candidate:
    id: uuid.UUID
    row: dict[str, Any]
    ranks: dict[str, int] = field(default_factory=dict)
    signals: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    fused: float = 0.0
    score: float = 0.0

    @property
    def relevant(self) -> bool:
        return bool(self.ranks.keys() & {"lexical", "identifier", "relation"}) or self.signals.get("dense_ok", 0) > 0


def collect(lists: Mapping[str, Sequence[Hit]], rows: Mapping[uuid.UUID, dict[str, Any]]) -> list[Candidate]:
    """One candidate per memory found by any retriever, with its rank and score in each."""
    out: dict[uuid.UUID, Candidate] = {}
    for name, hits in lists.items():
        for rank, hit in enumerate(hits, start=1):
            if hit.id not in rows:
                continue
            c = out.setdefault(hit.id, Candidate(hit.id, rows[hit.id]))
            c.ranks[name] = rank
            c.signals[name] = hit.score
            c.reasons.append(f"{name}#{rank}")
    return list(out.values())


def fuse(cands: list[Candidate], cfg: RetrievalConfig, *, named_speakers: Sequence[str]) -> None:
    """Set ``fused`` on every candidate (score fusion or RRF), then the speaker and session boosts."""
    w = cfg.weights
    for c in cands:
        cos_self = c.row.get("cos_self")
        cos_ctx = c.row.get("cos_context")
        if cos_self is not None:
            c.signals["cos_self"] = float(cos_self)
            c.signals["cos_context"] = float(cos_ctx if cos_ctx is not None else cos_self)
            if max(c.signals["cos_self"], c.signals["cos_context"]) >= cfg.min_similarity:
                c.signals["dense_ok"] = 1.0
    if cfg.fusion == "rrf":
        weight = {"lexical": w.lexical, "dense": w.dense, "dense_context": w.dense_context, "identifier": w.identifier}
        for c in cands:
            c.fused = sum(weight.get(name, 0.0) / (cfg.rrf_k + rank) for name, rank in c.ranks.items())
    else:
        top_bm25 = max((c.signals.get("lexical", 0.0) for c in cands), default=0.0) or 1.0
        for c in cands:
            s = w.lexical * c.signals.get("lexical", 0.0) / top_bm25 if cfg.lexical else 0.0
            if cfg.dense and "cos_self" in c.signals:
                s += w.dense * c.signals["cos_self"] + w.dense_context * c.signals["cos_context"]
            s += w.identifier * c.signals.get("identifier", 0.0)
            c.fused = s
    if len(named_speakers) == 1 and cfg.speaker_boost != 1.0:
        name = named_speakers[0]
        for c in cands:
            if c.row.get("speaker") == name and c.fused > 0:
                c.fused *= cfg.speaker_boost
                c.reasons.append("speaker_named")
    if cfg.session_boost > 0:
        best: dict[str, float] = {}
        for c in cands:
            session = c.row.get("session_id")
            if session is not None:
                best[session] = max(best.get(session, 0.0), c.fused)
        for c in cands:
            session = c.row.get("session_id")
            if session is not None and best[session] > 0:
                c.fused += cfg.session_boost * best[session]


def utility(cands: list[Candidate], cfg: RetrievalConfig, at: datetime) -> None:
    """Relevance (fused, scaled to 0..1) plus recency decay, confidence and importance (weights in cfg)."""
    u = cfg.utility
    top = max((c.fused for c in cands), default=0.0) or 1.0
    for c in cands:
        age_days = max((at - c.row["valid_from"]).total_seconds(), 0.0) / 86400.0
        recency = math.pow(0.5, age_days / u.recency_half_life_days)
        c.score = (
            u.relevance * c.fused / top
            + u.recency * recency
            + u.confidence * float(c.row["confidence"])
            + u.importance * float(c.row["importance"])
        )
        c.signals["recency"] = recency


def rank(cands: list[Candidate]) -> list[Candidate]:
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
