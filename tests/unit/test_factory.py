"""build_embedder: Settings -> embedder. No I/O: nothing is loaded, connected to or sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engram.config import Settings
from engram.errors import ValidationError
from engram.providers.base import Embedder
from engram.providers.factory import build_embedder
from engram.providers.hashing import HashingEmbedder
from engram.providers.openai import OpenAIEmbedder


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what a test sets counts: no ENGRAM_* or DATABASE_URL from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("ENGRAM_") or name == "DATABASE_URL":
            monkeypatch.delenv(name)


def settings(**kw: Any) -> Settings:
    return Settings(_env_file=None, data_dir=Path("/nonexistent"), **kw)  # type: ignore[call-arg]


def test_hashing() -> None:
    embedder = build_embedder(settings(embedder="hashing"))
    assert isinstance(embedder, HashingEmbedder)
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "engram/hashing-384"
    assert embedder.dimensions == 384


def test_openai_needs_a_url() -> None:
    with pytest.raises(ValidationError) as info:
        build_embedder(settings(embedder="openai"))
    assert info.value.field == "embedding_url"
    assert "ENGRAM_EMBEDDING_URL" in info.value.message


def test_openai_empty_url_is_missing() -> None:
    with pytest.raises(ValidationError) as info:
        build_embedder(settings(embedder="openai", embedding_url=""))
    assert info.value.field == "embedding_url"


async def test_openai_with_url() -> None:
    embedder = build_embedder(
        settings(
            embedder="openai",
            embedding_url="http://embeddings.invalid/v1",
            embedding_model="nomic-embed-text",
            embedding_dimensions=768,
        )
    )
    try:
        assert isinstance(embedder, OpenAIEmbedder)
        assert isinstance(embedder, Embedder)
        assert "nomic-embed-text" in embedder.model_id
        assert embedder.model_id == "openai-compatible/nomic-embed-text@768"
        assert embedder.dimensions == 768
    finally:
        await embedder.aclose()


async def test_openai_defaults() -> None:
    embedder = build_embedder(settings(embedder="openai", embedding_url="http://embeddings.invalid/v1"))
    try:
        assert embedder.model_id == "openai-compatible/text-embedding-3-small@1536"
        assert embedder.dimensions == 1536
    finally:
        await embedder.aclose()


async def test_openai_settings_reach_the_client() -> None:
    embedder = build_embedder(
        settings(
            embedder="openai",
            embedding_url="http://embeddings.invalid/v1/",
            embedding_api_key="sk-secret",
            embedding_timeout=3.5,
            embedding_send_dimensions=True,
            embedding_dimensions=256,
        )
    )
    assert isinstance(embedder, OpenAIEmbedder)
    try:
        client = embedder._client
        assert client.headers["Authorization"] == "Bearer sk-secret"
        assert client.timeout.read == 3.5
        assert str(client.base_url) == "http://embeddings.invalid/v1/"
        assert embedder._send_dimensions is True
    finally:
        await embedder.aclose()


async def test_openai_without_key_sends_no_authorization() -> None:
    embedder = build_embedder(settings(embedder="openai", embedding_url="http://embeddings.invalid/v1"))
    assert isinstance(embedder, OpenAIEmbedder)
    try:
        assert "Authorization" not in embedder._client.headers
    finally:
        await embedder.aclose()


async def test_openai_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDER", "openai")
    monkeypatch.setenv("ENGRAM_EMBEDDING_URL", "http://embeddings.invalid/v1")
    monkeypatch.setenv("ENGRAM_EMBEDDING_MODEL", "bge-small-en")
    monkeypatch.setenv("ENGRAM_EMBEDDING_DIMENSIONS", "384")
    embedder = build_embedder(Settings(_env_file=None))  # type: ignore[call-arg]
    try:
        assert isinstance(embedder, OpenAIEmbedder)
        assert embedder.model_id == "openai-compatible/bge-small-en@384"
    finally:
        await embedder.aclose()


async def test_local_is_the_default_and_loads_lazily() -> None:
    from engram.providers.local import MODEL_ID, LocalMiniLM

    embedder = build_embedder(settings())
    assert isinstance(embedder, LocalMiniLM)
    try:
        assert embedder.model_id == MODEL_ID
        assert embedder.dimensions == 384
        assert embedder._model is None  # the weights load on first use (or Engram.open), not here
    finally:
        await embedder.aclose()
