"""Engram: durable, typed, tenant-isolated memory for AI agents on PostgreSQL + pgvector."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.errors import (
        AuthenticationError,
        ConflictError,
        EngramError,
        IdempotencyConflict,
        MigrationError,
        NotFoundError,
        PermissionDenied,
        PolicyRejection,
        PreconditionRequired,
        ProviderError,
        ProviderTimeout,
        RevisionConflict,
        StoreUnavailable,
        ValidationError,
    )
    from engram.model import (
        HistoryEntry,
        Memory,
        MemoryInput,
        MemoryPage,
        MemoryPatch,
        Policy,
        Source,
        WriteResult,
    )
    from engram.providers import Embedder, EmbeddingGateway, HashingEmbedder
    from engram.service import Engram
    from engram.sync import EngramSync

# Names load on first use: `engram.client` and the CLI's quick commands must start without the service
# (numpy, psycopg, the admission policy), which `from engram import Engram` still gets as before.
_WHERE = {
    "Settings": "engram.config",
    "Engram": "engram.service",
    "EngramSync": "engram.sync",
    **dict.fromkeys(("Embedder", "EmbeddingGateway", "HashingEmbedder"), "engram.providers"),
    **dict.fromkeys(
        ("HistoryEntry", "Memory", "MemoryInput", "MemoryPage", "MemoryPatch", "Policy", "Source", "WriteResult"),
        "engram.model",
    ),
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    if name in __all__:
        return getattr(importlib.import_module("engram.errors"), name)
    raise AttributeError(f"module 'engram' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "AuthenticationError",
    "ConflictError",
    "Embedder",
    "EmbeddingGateway",
    "Engram",
    "EngramError",
    "EngramSync",
    "HashingEmbedder",
    "HistoryEntry",
    "IdempotencyConflict",
    "Memory",
    "MemoryInput",
    "MemoryPage",
    "MemoryPatch",
    "MigrationError",
    "NotFoundError",
    "PermissionDenied",
    "Policy",
    "PolicyRejection",
    "PreconditionRequired",
    "ProviderError",
    "ProviderTimeout",
    "RevisionConflict",
    "Settings",
    "Source",
    "StoreUnavailable",
    "ValidationError",
    "WriteResult",
    "__version__",
]
