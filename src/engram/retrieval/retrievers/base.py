"""What every retriever shares: the row its statement returns, its hits, what a recall asks of it, and its
interface. No I/O here: ranking imports these types."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from engram.providers.base import Vector
    from engram.retrieval.config import RetrievalConfig
    from engram.retrieval.filter import Filter
    from engram.retrieval.retrievers.columns import RowCursor
    from engram.store.database import Conn


class Row(NamedTuple):
    """A memory as a candidate statement reads it (``columns.CANDIDATE_COLUMNS``): what fusion, the utility
    score and the packet need, read by the candidate statement itself so that nothing has to look the
    winners up again. Written once, by the statement's row factory (``columns.candidate_rows``); a tuple,
    so no stage can change it, built from the statement's own tuple without a dict per row."""

    id: uuid.UUID
    speaker: str | None
    session_id: str | None
    valid_from: datetime
    confidence: float
    importance: float
    summary: str | None
    kind: str
    source_type: str
    source_ref: str | None
    recorded_at: datetime
    require_citation: bool
    fact_key: str | None
    content: str | None  # None when longer than columns.INLINE_CONTENT bytes (read after ranking)
    score: float | None = None  # the retriever's own score (a dense one is NULL for a vector it lacks)
    term_share: float | None = None  # lexical: the share of the query's idf weight the memory holds
    cos_self: float | None = None  # the query's cosines to the memory's own and context vectors...
    cos_context: float | None = None
    scored: bool = False  # ...read by the statement (None then: the memory has no such vector)


# A memory's (cos_self, cos_context), read after its row when the statement ran before the query vector was
# known (None: no such vector).
Cosines = tuple[float | None, float | None]


class Relation(NamedTuple):
    """A relation between two memories, as recall's expansion follows it."""

    src_id: uuid.UUID
    dst_id: uuid.UUID
    type: str
    weight: float


@dataclass(slots=True)
class Hit:
    """One candidate of one retriever: the memory, its score in that retriever, and its row."""

    id: uuid.UUID
    score: float
    row: Row


@dataclass(frozen=True, slots=True)
class Search:
    """What a recall asks of its retrievers; each reads the parts it needs."""

    where: Filter
    cfg: RetrievalConfig
    text: str = ""  # the query (lexical: the statement chooses its lexemes itself)
    identifiers: Sequence[str] = ()  # to match exactly (``query.identifiers``)
    names: Sequence[str] = ()  # the query's names (``query.names``): lexical reads their common words together
    fts: str = "english"  # the tenant's text search configuration
    n_docs: int = 0  # BM25F's corpus statistics
    avgdl: float = 1.0
    rarest: bool = True  # lexical reads the rarest lexeme even when it is over the postings budget
    vector: Vector | None = None  # the query vector when known: the rows then carry its cosines
    model_id: str | None = None
    dims: int = 0
    own_index: bool = False  # dense: the tenant has an HNSW index of its own
    scope: bool = False  # dense: every row of the caller's small scope scored exactly (``retrieval.scope``)
    index_owner: str | None = None  # dense: the scope's one large owner, read through its own index
    context: bool = False  # dense: the tenant has context vectors (the rows then carry both cosines)
    dense_rows: int = 0  # dense: the rows wanted (``RecallPlan.dense_rows``); 0: ``cfg.candidates``
    scope_lexical: bool = False  # lexical: BM25F over the small scope's own postings, not the tenant's
    scope_size: int = 0  # the scope's memories (``RecallPlan.scope_size``): its BM25F corpus size
    lexical_rows: int = 0  # lexical: the rows wanted; 0: ``cfg.candidates``

    @property
    def dense_limit(self) -> int:
        """The dense rows wanted: the plan's (``dense_rows``), or ``candidates``."""
        return self.dense_rows or self.cfg.candidates

    @property
    def lexical_limit(self) -> int:
        """The lexical rows wanted: ``lexical_rows``, or ``candidates``."""
        return self.lexical_rows or self.cfg.candidates


class Retriever(Protocol):
    """One retriever: its statement sent (in pipeline mode its rows come back with the block's Sync, so a
    recall sends every statement before it reads any), and its hits read from what came back, best first."""

    name: str

    async def send(self, conn: Conn, search: Search) -> RowCursor | None: ...

    async def hits(self, cur: RowCursor | None, search: Search) -> list[Hit]: ...
