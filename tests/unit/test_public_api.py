"""The public surface is curated: a change to it is a deliberate change to this test."""

from __future__ import annotations

import engram
from engram import errors


def test_all_is_pinned() -> None:
    assert sorted(engram.__all__) == sorted(
        [
            "AuthenticationError", "ConflictError", "Embedder", "EmbeddingGateway", "Engram", "EngramError",
            "EngramSync", "HashingEmbedder", "HistoryEntry", "IdempotencyConflict", "Memory", "MemoryInput",
            "MemoryPage", "MemoryPatch", "MigrationError", "NotFoundError", "PermissionDenied", "Policy",
            "PolicyRejection", "PreconditionRequired", "ProviderError", "ProviderTimeout", "RevisionConflict",
            "Settings", "Source", "StoreUnavailable", "ValidationError", "WriteResult", "__version__",
        ]
    )  # fmt: skip
    for name in engram.__all__:
        assert hasattr(engram, name), name


def test_every_error_derives_from_engram_error_and_is_in_the_docstring() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.EngramError)
        assert name in doc, f"{name} is missing from the tree drawn in errors.py"


def test_every_error_maps_to_an_http_status_and_exit_code() -> None:
    from engram.api.errors import status_for
    from engram.cli.common import exit_code

    for name in errors.__all__:
        cls = getattr(errors, name)
        exc = cls.__new__(cls)
        assert 400 <= status_for(exc) <= 599
        assert exit_code(exc) >= 1
