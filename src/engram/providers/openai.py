"""An OpenAI-compatible ``/v1/embeddings`` client (OpenAI, vLLM, Ollama, LiteLLM, TEI, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from engram.errors import ProviderError, ProviderTimeout
from engram.providers.base import Vector, unit

_HINTS = {
    401: "check the API key (ENGRAM_EMBEDDING_API_KEY)",
    403: "check the API key (ENGRAM_EMBEDDING_API_KEY) and its access to the model",
    404: "check that the base URL is the API root (usually ending in /v1) and that the model is served there",
    429: "the endpoint is rate limiting; the writes are queued and retried",
}


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
        self._timeout = timeout
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout, transport=transport
        )
        self._url = str(self._client.base_url.join("embeddings"))

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
            raise ProviderTimeout(
                f"embedding endpoint {self._url} did not answer within {self._timeout}s "
                f"({type(exc).__name__}); check that it is up and not overloaded, or raise ENGRAM_EMBEDDING_TIMEOUT"
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(
                f"embedding endpoint {self._url} unreachable: {type(exc).__name__}: {exc or 'no details'}"
            ) from exc
        if resp.status_code != 200:
            hint = _HINTS.get(resp.status_code, "")
            raise ProviderError(
                f"embedding endpoint {self._url} answered {resp.status_code} {resp.reason_phrase}"
                + (f" ({hint})" if hint else "")
                + f": {resp.text[:300]}"
            )
        return unit(self._parse(resp, len(texts)))

    def _parse(self, resp: httpx.Response, count: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The vectors of an embeddings response, checked and in input order (servers may reorder)."""
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            indexes = [d["index"] for d in data]
            vectors = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(
                f"embedding endpoint {self._url} returned an unexpected body ({type(exc).__name__}: {exc}); "
                f"expected an OpenAI embeddings response, got: {resp.text[:200]}"
            ) from exc
        if len(data) != count:
            raise ProviderError(f"embedding endpoint {self._url} returned {len(data)} embeddings for {count} inputs")
        if indexes != list(range(count)):
            raise ProviderError(
                f"embedding endpoint {self._url} returned the index values {indexes[:20]}, expected 0..{count - 1} "
                "once each; the vectors cannot be matched to the inputs"
            )
        if vectors.ndim != 2:
            raise ProviderError(f"embedding endpoint {self._url} returned embeddings that are not lists of numbers")
        if vectors.shape[1] != self._dimensions:
            raise ProviderError(
                f"embedding endpoint {self._url} returned {vectors.shape[1]}-dimensional vectors for model "
                f"{self._model!r}, "
                f"expected {self._dimensions}: set ENGRAM_EMBEDDING_DIMENSIONS to the model's size, or "
                "ENGRAM_EMBEDDING_SEND_DIMENSIONS=true if the model can shorten its vectors"
            )
        if not np.isfinite(vectors).all():
            raise ProviderError(f"embedding endpoint {self._url} returned non-finite values (NaN or infinity)")
        return vectors

    async def aclose(self) -> None:
        await self._client.aclose()
