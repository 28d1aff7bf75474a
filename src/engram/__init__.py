"""Engram: durable, typed, tenant-isolated memory for AI agents on PostgreSQL + pgvector."""

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
