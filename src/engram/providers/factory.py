"""Build the configured embedder."""

from __future__ import annotations

from engram.config import Settings
from engram.errors import ValidationError
from engram.providers.base import Embedder


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "hashing":
        from engram.providers.hashing import HashingEmbedder

        return HashingEmbedder()
    if settings.embedder == "openai":
        from engram.providers.openai import OpenAIEmbedder

        if not settings.embedding_url:
            raise ValidationError("ENGRAM_EMBEDDING_URL must be set when ENGRAM_EMBEDDER=openai", field="embedding_url")
        key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
        return OpenAIEmbedder(
            base_url=settings.embedding_url,
            model=settings.embedding_model,
            dimensions=settings.embedding_dimensions,
            api_key=key,
            timeout=settings.embedding_timeout,
            send_dimensions=settings.embedding_send_dimensions,
        )
    from engram.providers.local import LocalMiniLM

    return LocalMiniLM(batch_size=settings.embedding_batch_size, runtime=settings.embedding_runtime)
