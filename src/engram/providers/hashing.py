"""A model-free embedder: signed feature hashing of word unigrams and bigrams.

It needs no weights and no threads, so tests and tiny deployments can run the whole write and
retrieval path instantly. Its vectors are lexical, not semantic; use the MiniLM default in production.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from engram.providers.base import Vector, unit

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    def __init__(self, dimensions: int = 384) -> None:
        self._dimensions = dimensions

    @property
    def model_id(self) -> str:
        return f"engram/hashing-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _one(self, text: str) -> np.ndarray[tuple[int], np.dtype[np.float32]]:
        vec = np.zeros(self._dimensions, dtype=np.float32)
        words = _WORD.findall(text.lower())
        for feature in words + [a + " " + b for a, b in pairwise(words)]:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dimensions
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        return vec

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        return unit(np.stack([self._one(t) for t in texts]))

    async def aclose(self) -> None:
        return None
