"""The candidate statements as sent: compacted (``columns.compact``) without changing what they say."""

from __future__ import annotations

from engram.retrieval.retrievers import identifiers, lexical
from engram.retrieval.retrievers.columns import compact

# psycopg converts a statement's named placeholders once and reuses the result only up to this length
# (psycopg._queries.MAX_CACHED_STATEMENT_LENGTH).
PSYCOPG_CACHED_LENGTH = 4096


def test_compact_drops_comments_and_layout_but_not_literals() -> None:
    stmt = b"SELECT  'a  --b' AS x, -- a comment\n\t y   FROM t\n WHERE z = 'it''s  so'  -- end\n"
    assert compact(stmt) == b"SELECT 'a  --b' AS x, y FROM t WHERE z = 'it''s  so'"


def test_compact_keeps_a_statements_tokens() -> None:
    stmt = lexical.statement((), True, 2000, False, True)
    assert b"--" not in stmt and b"\n" not in stmt and b"  " not in stmt
    assert stmt.count(b"%(tenant_id)s") > 3  # the placeholders are all there


def test_usual_candidate_statements_fit_psycopgs_cache() -> None:
    for shape in [(), ("agent_id",), ("session_id",), ("kinds",)]:
        for stmt in (
            lexical.scope_statement(shape, True),
            lexical.statement(shape, True, 2000, False),
            identifiers.statement(shape, True, 2000),
        ):
            assert len(stmt) <= PSYCOPG_CACHED_LENGTH, (shape, len(stmt))
