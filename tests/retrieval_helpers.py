"""One-shot retriever calls for tests, and the lexical retriever's choice of lexemes written again in Python
(``query_terms`` + ``keep_lexemes``): what the tests check the statement's own choice by."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from engram import Engram
from engram.retrieval.config import RetrievalConfig
from engram.retrieval.filter import Filter
from engram.retrieval.gather import recall_settings
from engram.retrieval.query import names
from engram.retrieval.retrievers import dense as dense_retrievers
from engram.retrieval.retrievers import identifiers, lexical
from engram.retrieval.retrievers.base import Hit, Search
from engram.retrieval.retrievers.columns import execute
from engram.store.database import TENANT_SETTING, Conn


async def lexical_hits(
    conn: Conn,
    f: Filter,
    cfg: RetrievalConfig,
    *,
    n_docs: int,
    avgdl: float,
    query: str = "",
    fts: str = "english",
    rarest: bool = True,
    dfs: dict[str, int] | None = None,
) -> list[Hit]:
    """BM25F candidates. With ``dfs`` (``query_terms``), of the lexemes ``keep_lexemes`` keeps of them, by
    the same statement given those lexemes instead of choosing its own."""
    search = Search(f, cfg, text=query, fts=fts, n_docs=n_docs, avgdl=avgdl, rarest=rarest, names=names(query))
    if dfs is None:
        return await lexical.RETRIEVER.hits(await lexical.RETRIEVER.send(conn, search), search)
    kept = keep_lexemes(dfs, cfg.lexical_postings_budget, rarest=rarest)
    if not kept:
        return []
    params = {**lexical.parameters(search), "lexemes": list(kept)}
    return await lexical.RETRIEVER.hits(await execute(conn, lexical.given_statement(f.shape), params), search)


def keep_lexemes(dfs: dict[str, int], budget: int, *, rarest: bool = True) -> dict[str, int]:
    """The rarest lexemes whose postings fit the budget; with ``rarest``, at least the rarest one even if it
    does not fit (``lexical._KEPT_TERMS``, in Python)."""
    kept: dict[str, int] = {}
    used = 0
    for lexeme, n in sorted(dfs.items(), key=lambda kv: (kv[1], kv[0].encode())):
        if (kept or not rarest) and used + n > budget:
            break
        kept[lexeme] = n
        used += n
    return kept


async def query_terms(conn: Conn, tenant_id: str, fts: str, query: str, cap: int) -> dict[str, int]:
    """The query's lexemes and how many of the tenant's documents hold each (at most ``cap``)."""
    params = {"tenant_id": tenant_id, "fts": fts, "query": query}
    stmt = sql.SQL(lexical.QUERY_TERMS).format(cap=sql.Literal(cap)).as_bytes()
    rows = await (await conn.execute(stmt, params, binary=True)).fetchall()
    return {r["lexeme"]: int(r["n"]) for r in rows}


async def dense_hits(
    conn: Conn,
    f: Filter,
    vector: Any,
    cfg: RetrievalConfig,
    *,
    model_id: str,
    dims: int,
    context: bool = False,
    own_index: bool = False,
    scope: bool = False,
    tenant_context: bool = False,
) -> list[Hit]:
    """The nearest memories by cosine (``dense.SELF``, or ``dense.CONTEXT`` with ``context``); with
    ``tenant_context``, read as for a tenant that has context vectors (the rows carry both cosines)."""
    search = Search(
        f, cfg, vector=vector, model_id=model_id, dims=dims, own_index=own_index, scope=scope,
        context=tenant_context or context,
    )  # fmt: skip
    retriever = dense_retrievers.CONTEXT if context else dense_retrievers.SELF
    return await retriever.hits(await retriever.send(conn, search), search)


async def identifier_hits(conn: Conn, f: Filter, idents: list[str], cfg: RetrievalConfig) -> list[Hit]:
    """Memories holding the identifiers as whole tokens; score = the share of them matched."""
    search = Search(f, cfg, identifiers=idents)
    return await identifiers.RETRIEVER.hits(await identifiers.RETRIEVER.send(conn, search), search)


async def recall_settings_here(conn: Conn, tenant_id: str, cfg: RetrievalConfig) -> None:
    """A recall's settings (``gather.recall_settings``) in ``conn``'s transaction, as ``Database.reads``
    sets them, on a connection the test holds (prepared statements are per connection)."""
    for name, value in {TENANT_SETTING: tenant_id, **recall_settings(cfg)}.items():
        await conn.execute("SELECT set_config(%s, %s, true)", [name, value])


async def plans_of(conn: Conn, pattern: str) -> list[tuple[int, int]]:
    """(generic, custom) plan counts of ``conn``'s prepared statements whose text matches ``pattern``."""
    rows = await (
        await conn.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement ~ %s",
                           [pattern])
    ).fetchall()  # fmt: skip
    return [(r["generic_plans"], r["custom_plans"]) for r in rows]


async def postings_of(engram: Engram, memory_id: object) -> set[str]:
    """The lexemes (and name pairs) of one memory's postings in tenant acme."""
    async with engram.db.tenant("acme") as conn:
        rows = await (
            await conn.execute("SELECT lexeme FROM search_postings WHERE memory_id = %s", [memory_id])
        ).fetchall()
    return {r["lexeme"] for r in rows}
