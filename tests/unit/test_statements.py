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


def test_candidate_statements_fit_psycopgs_cache() -> None:
    # The lexical and identifier statements with any one optional filter part, or as_of and one, the
    # tenant-wide statement that reads a query's common name words together among them (it was 4,540 bytes
    # unfiltered before ``LEXICAL`` named its filter once). With every part at once it is 4,157 bytes.
    parts = ("agent_id", "session_id", "kinds", "tags", "metadata")
    for shape in [(), ("as_of",), *((p,) for p in parts), *(("as_of", p) for p in parts)]:
        for cosines in (True, False):
            for stmt in (
                lexical.scope_statement(shape, cosines),
                lexical.statement(shape, cosines, 2000, False),
                lexical.statement(shape, cosines, 500, True, True),
                identifiers.statement(shape, cosines, 2000),
            ):
                assert len(stmt) <= PSYCOPG_CACHED_LENGTH, (shape, cosines, len(stmt))


def test_lexical_statement_names_its_filter_once() -> None:
    # The window's rows and the rest are looked up through one definition of what the caller may see.
    stmt = lexical.statement(("kinds",), True, 500, False, True)
    assert stmt.count(b"m.allow_in_prompt") == 1 and stmt.count(b"m.kind = ANY(%(kinds)s)") == 1
