"""Pure domain types and rules: no I/O."""

from engram.model.ids import new_id
from engram.model.memory import (
    KINDS,
    SOURCE_TYPES,
    STATUSES,
    VISIBILITIES,
    HistoryEntry,
    Memory,
    MemoryInput,
    MemoryPage,
    MemoryPatch,
    Policy,
    Source,
    WriteResult,
)
from engram.model.text import MAX_CONTENT_CHARS, content_hash, normalise_whitespace

__all__ = [
    "KINDS",
    "MAX_CONTENT_CHARS",
    "SOURCE_TYPES",
    "STATUSES",
    "VISIBILITIES",
    "HistoryEntry",
    "Memory",
    "MemoryInput",
    "MemoryPage",
    "MemoryPatch",
    "Policy",
    "Source",
    "WriteResult",
    "content_hash",
    "new_id",
    "normalise_whitespace",
]
