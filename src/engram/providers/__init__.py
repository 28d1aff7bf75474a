"""Embedders (and later LLMs): a Protocol plus one module per provider."""

from engram.providers.base import Embedder, Vector
from engram.providers.gateway import EmbeddingGateway
from engram.providers.hashing import HashingEmbedder

__all__ = ["Embedder", "EmbeddingGateway", "HashingEmbedder", "Vector"]
