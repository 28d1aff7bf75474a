"""The embedder interface every provider implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

Vector = np.ndarray[Any, np.dtype[np.float32]]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``model_id`` names the model *and* version: it is stored beside every vector, so changing the
    model means a new id and a rebuild beside the old vectors, never a silent mix.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order. Raises ProviderError on failure."""
        ...

    async def aclose(self) -> None: ...


def unit(vectors: np.ndarray[Any, Any]) -> list[Vector]:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return list(arr / norms)
