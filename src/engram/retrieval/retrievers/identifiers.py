"""The identifier retriever: memories whose own text holds the query's identifiers as whole tokens, found
through the postings or the trigram index."""

from __future__ import annotations

import functools
import uuid
from typing import LiteralString

from psycopg import sql

from engram.retrieval.filter import filter_clause
from engram.retrieval.query import escape_identifier
from engram.retrieval.retrievers.base import Hit, Search
from engram.retrieval.retrievers.columns import CANDIDATE_COLUMNS, RowCursor, cosine_params, execute, finish, read_hits
from engram.store.database import Conn

# One statement, whose cost is bounded by the indexes and the window, never memories x identifiers. An
# identifier that is a lexeme of the tenant's search keys (most are: 504, inv-2024-0042, econnreset) finds
# its candidates through the postings, rarest first within the postings budget like lexical terms: one in
# thousands of memories ("30") tells them apart no better than a common word; one over the budget is not
# read at all. An identifier that is no lexeme of the tenant (ERR_504, a quoted phrase) goes through the
# trigram index. Either way only the memories that pass the filter are taken, best first up to a window (by
# how many of the identifiers their postings hold; trigram matches as found), and only those are searched:
# a memory counts only if its own content holds an identifier as a whole token (not its date or its
# neighbours); its score is how many of the branch's identifiers it holds (a memory can be in both
# branches: ``hits`` adds its scores up). One search per identifier and memory, which stops at the first
# occurrence.
# (``body``: the content detoasted once for all the searches, not once for each.)
_MATCHED: LiteralString = "(SELECT count(*)::float8 FROM {branch} i WHERE m.body ~* i.pattern)"
IDENTIFIERS: LiteralString = """
WITH ids AS MATERIALIZED (
    SELECT i.lexeme, i.alt, '(?:^|[^[:alnum:]])(' || i.alt || ')(?=$|[^[:alnum:]])' AS pattern,
           (SELECT count(*) FROM (SELECT 1 FROM search_postings p
                                   WHERE p.tenant_id = %(tenant_id)s AND p.lexeme = i.lexeme LIMIT {cap}) x) AS n
      FROM unnest(%(lexemes)s::text[], %(alts)s::text[]) AS i(lexeme, alt)
), read AS MATERIALIZED (
    SELECT lexeme, pattern
      FROM (SELECT lexeme, pattern, sum(n) OVER w AS used FROM ids WHERE n BETWEEN 1 AND {budget}
             WINDOW w AS (ORDER BY n, lexeme COLLATE "C" ROWS UNBOUNDED PRECEDING)) t
     WHERE used <= {budget}
), others AS MATERIALIZED (
    SELECT alt, pattern FROM ids WHERE n = 0
), by_postings AS (
    SELECT m.id, {matched_read} AS score, {columns}
      FROM (SELECT m.*, m.content || '' AS body
              FROM (SELECT memory_id, count(*) AS k FROM search_postings
                     WHERE tenant_id = %(tenant_id)s AND lexeme = ANY(ARRAY(SELECT lexeme FROM read)) AND tf >= 1
                     GROUP BY memory_id) c
              JOIN memories m ON m.tenant_id = %(tenant_id)s AND m.id = c.memory_id
             WHERE {filter}
             ORDER BY c.k DESC, m.recorded_at DESC
             LIMIT %(window)s) m
), by_trigrams AS (
    SELECT m.id, {matched_others} AS score, {columns}
      FROM (SELECT m.*, m.content || '' AS body FROM memories m
             WHERE EXISTS (SELECT 1 FROM others) AND {filter}
               AND m.content ~* (SELECT '(?:^|[^[:alnum:]])(' || string_agg(alt, '|') || ')(?=$|[^[:alnum:]])'
                                   FROM others)
             LIMIT %(limit)s) m
)
SELECT * FROM (SELECT * FROM by_postings WHERE score > 0 ORDER BY score DESC, recorded_at DESC LIMIT %(limit)s) a
UNION ALL
SELECT * FROM (SELECT * FROM by_trigrams WHERE score > 0 ORDER BY score DESC, recorded_at DESC LIMIT %(limit)s) b
"""
IDENTIFIER_WINDOW = 2  # memories verified through the postings, as a multiple of the candidates wanted


@functools.lru_cache(maxsize=256)
def statement(shape: tuple[str, ...], cosines: bool, budget: int) -> bytes:
    inner = sql.SQL(IDENTIFIERS).format(
        filter=filter_clause(shape), columns=sql.SQL(CANDIDATE_COLUMNS), cap=sql.Literal(budget + 1),
        budget=sql.Literal(budget),
        matched_read=sql.SQL(_MATCHED).format(branch=sql.SQL("read")),
        matched_others=sql.SQL(_MATCHED).format(branch=sql.SQL("others")),
    )  # fmt: skip
    return finish(inner, cosines)


class Identifiers:
    """Memories containing the query's identifiers as whole tokens (in their own text, not their
    neighbours'); score = the share of the identifiers matched. With the query vector, their rows carry its
    cosines too."""

    name = "identifier"

    async def send(self, conn: Conn, search: Search) -> RowCursor | None:
        if not search.identifiers:
            return None
        cfg = search.cfg
        params = {
            **search.where.params,
            "lexemes": [i.lower() for i in search.identifiers],
            "alts": [escape_identifier(i) for i in search.identifiers],
            "limit": cfg.candidates,
            "window": cfg.candidates * IDENTIFIER_WINDOW,
        }
        cosines = cosine_params(params, search.vector, search.model_id)
        return await execute(conn, statement(search.where.shape, cosines, cfg.lexical_postings_budget), params)

    async def hits(self, cur: RowCursor | None, search: Search) -> list[Hit]:
        if cur is None:
            return []
        found: dict[uuid.UUID, Hit] = {}
        for hit in await read_hits(cur):
            if hit.id in found:  # found by both branches: the identifiers it matched add up
                found[hit.id].score += hit.score
            else:
                found[hit.id] = hit
        ranked = sorted(found.values(), key=lambda h: (-h.score, h.id))[: search.cfg.candidates]
        for hit in ranked:
            hit.score /= len(search.identifiers)
        return ranked


RETRIEVER = Identifiers()
