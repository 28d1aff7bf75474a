"""Retrieval: filtered candidates (lexical BM25F, dense, identifiers), fusion, ranking, packet, receipts."""

from engram.retrieval.config import PRESETS, FusionWeights, RetrievalConfig, UtilityWeights, preset

__all__ = ["PRESETS", "FusionWeights", "RetrievalConfig", "UtilityWeights", "preset"]
