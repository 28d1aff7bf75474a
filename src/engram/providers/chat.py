"""One OpenAI-compatible ``/v1/chat/completions`` endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...), as the LLM-backed
features use it (the extractor, the conversation summariser): JSON answers at temperature 0, a 429 or 5xx
retried once after the server's Retry-After (bounded), and every failure a ``ProviderError`` that says what
to check."""

from __future__ import annotations

import asyncio
import json
import math
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from engram.config import Settings
from engram.errors import ProviderError, ProviderTimeout, ValidationError
from engram.policy.secrets import without_secrets

RETRIED = frozenset({429, 500, 502, 503, 504})
_HINTS = {
    401: "check the API key (ENGRAM_LLM_API_KEY)",
    403: "check the API key (ENGRAM_LLM_API_KEY) and its access to the model",
    404: "check that the base URL is the API root (usually ending in /v1) and that ENGRAM_LLM_MODEL is served there",
    429: "the endpoint is rate limiting",
}
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)


def retry_after(header: str | None, *, default: float, cap: float) -> float:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), within 0..cap."""
    if header is None:
        return min(default, cap)
    try:
        seconds = float(header)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(header) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError, IndexError):
            return min(default, cap)
    if math.isnan(seconds):
        return min(default, cap)
    return min(max(seconds, 0.0), cap)


def json_of(content: str) -> Any:
    """The JSON in a model's answer: bare, in a ``` fence, or with prose around one object."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            return json.loads(text[start : end + 1])  # ValueError when this is not JSON either
        raise


def shown(text: str, limit: int = 300) -> str:
    """A model's or server's words for an error message: short, and with any secret it echoed redacted."""
    redacted = str(without_secrets(text[: limit * 10]))  # redacted before it is cut: no half a secret
    return redacted if len(redacted) <= limit else redacted[:limit] + "..."


class ChatEndpoint:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retry_wait: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self._timeout = timeout
        self._max_retry_wait = max_retry_wait
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout, transport=transport
        )
        self.url = str(self._client.base_url.join("chat/completions"))

    async def complete_json(self, system: str, user: str) -> str:
        """The model's answer (asked for one JSON object) to a system and a user message."""
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {"type": "json_object"},
            "temperature": 0,
        }
        return self._content(await self._post(body))

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        """The endpoint's 200 answer, trying once more after a 429, a 5xx or a dropped connection."""
        for attempt in (1, 2):
            try:
                resp = await self._client.post("chat/completions", json=body)
            except httpx.TimeoutException as exc:
                raise ProviderTimeout(
                    f"chat endpoint {self.url} did not answer within {self._timeout}s ({type(exc).__name__}); "
                    "check that it is up and not overloaded, or raise ENGRAM_LLM_TIMEOUT"
                ) from exc
            except httpx.TransportError as exc:
                if attempt == 1:
                    await asyncio.sleep(min(1.0, self._max_retry_wait))
                    continue
                raise ProviderError(
                    f"chat endpoint {self.url} unreachable: {type(exc).__name__}: {exc or 'no details'}"
                ) from exc
            if resp.status_code == 200:
                return resp
            if resp.status_code in RETRIED and attempt == 1:
                wait = retry_after(resp.headers.get("Retry-After"), default=1.0, cap=self._max_retry_wait)
                await asyncio.sleep(wait)
                continue
            hint = _HINTS.get(resp.status_code, "")
            tries = " after 2 attempts" if resp.status_code in RETRIED else ""
            raise ProviderError(
                f"chat endpoint {self.url} answered {resp.status_code} {resp.reason_phrase}{tries}"
                + (f" ({hint})" if hint else "")
                + f": {shown(resp.text)}"
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _content(self, resp: httpx.Response) -> str:
        try:
            message = resp.json()["choices"][0]["message"]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ProviderError(
                f"chat endpoint {self.url} returned an unexpected body ({type(exc).__name__}: {exc}); expected an "
                f"OpenAI chat completion, got: {shown(resp.text)}"
            ) from exc
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            refusal = message.get("refusal") if isinstance(message, dict) else None
            raise ProviderError(
                f"chat endpoint {self.url} answered without content"
                + (f" (the model refused: {shown(str(refusal))})" if refusal else "")
            )
        return content

    async def aclose(self) -> None:
        await self._client.aclose()


def endpoint_from(settings: Settings, feature: str) -> ChatEndpoint:
    """The configured chat endpoint (ENGRAM_LLM_*), for ``feature`` (the setting that asked for it)."""
    if not settings.llm_url:
        raise ValidationError(f"ENGRAM_LLM_URL must be set when {feature}=llm", field="llm_url")
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return ChatEndpoint(base_url=settings.llm_url, model=settings.llm_model, api_key=key, timeout=settings.llm_timeout)
