"""An OpenAI-compatible ``/v1/embeddings`` client (OpenAI, vLLM, Ollama, LiteLLM, TEI, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from engram.errors import ProviderError, ProviderTimeout
from engram.providers.base import Vector, unit


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimensions: int,
        api_key: str | None = None,
        timeout: float = 10.0,
        send_dimensions: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._model = model
        self._dimensions = dimensions
        self._send_dimensions = send_dimensions
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout, transport=transport
        )

    @property
    def model_id(self) -> str:
        return f"openai-compatible/{self._model}@{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        body: dict[str, Any] = {"model": self._model, "input": list(texts), "encoding_format": "float"}
        if self._send_dimensions:
            body["dimensions"] = self._dimensions
        try:
            resp = await self._client.post("embeddings", json=body)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"embedding endpoint {self._client.base_url} timed out") from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"embedding endpoint {self._client.base_url} unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise ProviderError(f"embedding endpoint answered {resp.status_code}: {resp.text[:300]}")
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            vectors = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"embedding endpoint returned an unexpected body: {exc}") from exc
        if vectors.shape != (len(texts), self._dimensions):
            raise ProviderError(
                f"embedding endpoint returned shape {vectors.shape}, expected ({len(texts)}, {self._dimensions})"
            )
        return unit(vectors)

    async def aclose(self) -> None:
        await self._client.aclose()
