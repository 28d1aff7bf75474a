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


def build_embedder_spec(spec: str, settings: Settings) -> Embedder:
    """The embedder a spec names, as ``engram reembed --model`` takes it: ``local`` (all-MiniLM-L6-v2),
    ``hashing`` or ``hashing:DIMS``, ``openai:MODEL`` or ``openai:MODEL:DIMS`` (the endpoint and key from the
    ENGRAM_EMBEDDING_* settings)."""
    kind, _, rest = spec.strip().partition(":")
    try:
        if kind == "local" and not rest:
            return build_embedder(settings.model_copy(update={"embedder": "local"}))
        if kind == "hashing":
            from engram.providers.hashing import HashingEmbedder

            dims = int(rest) if rest else 384
            if not 1 <= dims <= 16000:
                raise ValueError
            return HashingEmbedder(dims)
        if kind == "openai" and rest:
            model, _, size = rest.partition(":")
            update: dict[str, object] = {"embedder": "openai", "embedding_model": model}
            if size:
                update["embedding_dimensions"] = int(size)
            return build_embedder(settings.model_copy(update=update))
    except ValueError:
        pass
    raise ValidationError(
        f"unknown embedding model {spec!r}: use local, hashing[:DIMS] or openai:MODEL[:DIMS]", field="model"
    )
