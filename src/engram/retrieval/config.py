"""Retrieval is declarative configuration with named presets (SPEC 5.3).

Defaults, and why (measured on LoCoMo, see docs/retrieval.md):

* Candidates: up to ``candidates`` (50) from each retriever, filtered first; HNSW ef_search at most 300
  (sized by the scope's share of the graph, ``scope.ef_search``); lexical terms (and identifiers) read
  rarest first within 500 postings (``lexical_postings_budget``); at most 8 identifiers of a query matched
  exactly (``max_identifiers``).
* Fusion ``score`` (default): ``lexical * bm25/max(bm25) + dense * cos(self) + dense_context * cos(context)
  + identifier * share_of_identifiers_matched``; ``rrf``: ``sum(weight / (rrf_k + rank))`` with rrf_k = 60.
* ``speaker_boost``: when the query names exactly one known speaker, that speaker's memories x 1.5.
* ``session_boost``: each memory gains 0.2 x the best score in its session (evidence clusters).
* Utility: ``relevance * score/max(score) + recency * 0.5^(age/half_life) + confidence * c + importance * i``
  with weights 1.0 / 0.1 / 0.1 / 0.1 and a 30-day half-life.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Weight = Annotated[float, Field(ge=0.0, le=100.0)]


class FusionWeights(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lexical: Weight = 1.0
    dense: Weight = 1.0
    dense_context: Weight = 1.0
    identifier: Weight = 1.0


class UtilityWeights(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    relevance: Weight = 1.0
    recency: Weight = 0.1
    recency_half_life_days: Annotated[float, Field(gt=0)] = 30.0
    confidence: Weight = 0.1
    importance: Weight = 0.1
    # How much reliability (source trust x confidence) scales relevance: 0 ignores it, 1 scales by it fully.
    trust: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5


class RetrievalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lexical: bool = True
    dense: bool = True
    identifiers: bool = True
    candidates: Annotated[int, Field(ge=1, le=1000)] = 50
    fusion: Literal["score", "rrf"] = "score"
    rrf_k: Annotated[int, Field(ge=1)] = 60
    weights: FusionWeights = FusionWeights()
    speaker_boost: Annotated[float, Field(ge=1.0, le=10.0)] = 1.5
    session_boost: Annotated[float, Field(ge=0.0, le=10.0)] = 0.2
    strip_speakers_from_dense_query: bool = True
    min_similarity: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.2
    max_similarity_gap: Annotated[float, Field(ge=0.0, le=2.0)] = 0.4
    min_term_share: Annotated[float, Field(ge=0.0, le=1.0)] = 0.3
    # Abstain when at least this share of the names the query mentions is unknown to the tenant...
    abstain_unknown_names: Annotated[float, Field(ge=0.0, le=1.01)] = 1.0
    # ...and no candidate is at least this close in meaning.
    abstain_similarity: Annotated[float, Field(ge=-1.0, le=1.01)] = 0.5
    utility: UtilityWeights = UtilityWeights()
    mmr: bool = False
    mmr_lambda: Annotated[float, Field(ge=0.0, le=1.0)] = 0.7
    expand_relations: bool = False
    relation_decay: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    ef_search: Annotated[int, Field(ge=10, le=1000)] = 300
    bm25_k1: Annotated[float, Field(gt=0)] = 1.2
    bm25_b: Annotated[float, Field(ge=0, le=1)] = 0.75
    lexical_postings_budget: Annotated[int, Field(ge=100, le=1_000_000)] = 500
    max_identifiers: Annotated[int, Field(ge=0, le=64)] = 8
    receipt_candidates: Annotated[int, Field(ge=0, le=1000)] = 50


PRESETS: dict[str, RetrievalConfig] = {
    "hybrid": RetrievalConfig(),
    "dense": RetrievalConfig(lexical=False, identifiers=False),
    "lexical": RetrievalConfig(dense=False),
}


def preset(name: str, **overrides: object) -> RetrievalConfig:
    """A named preset, optionally with fields replaced (``preset("hybrid", fusion="rrf")``)."""
    from engram.errors import ValidationError

    if name not in PRESETS:
        raise ValidationError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}", field="preset")
    base = PRESETS[name]
    return base.model_validate({**base.model_dump(), **overrides}) if overrides else base
