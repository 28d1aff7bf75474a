"""The service: the one way in. REST, CLI, MCP and workers call :class:`Engram`; it decides who may do what
(``model.access``), and only the store below it runs SQL."""

from engram.service.engram import Engram
from engram.service.opening import connect_store, locate_database, migrate_database
from engram.service.writes import MAX_BATCH, EmbedMode, MemoryLike

__all__ = ["MAX_BATCH", "EmbedMode", "Engram", "MemoryLike", "connect_store", "locate_database", "migrate_database"]
