"""Recall scopes (SPEC 5.1, ``retrieval.scope``): the plan chosen from the caller's scope, in the result
and the receipt; a small scope read exactly through the scope indexes, dense and lexical, giving what the
tenant-wide statements give; owners kept in step with visibility changes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engram import Engram
from engram.model import new_id
from engram.model.recall import RecallRequest
from engram.model.text import content_hash
from engram.retrieval.config import preset
from engram.retrieval.filter import build_filter
from engram.retrieval.gather import recall_settings
from engram.retrieval.retrievers import dense, lexical
from engram.retrieval.retrievers.base import Hit, Search
from engram.store import bulk
from engram.store.scope_indexes import owner_index_name
from tests.retrieval_helpers import dense_hits, plans_of, recall_settings_here

COLOURS = ["red", "blue", "green", "amber", "violet", "teal"]


async def seed(engram: Engram) -> None:
    """Six users with eight memories each, four shared memories, and two workflow memories."""
    items = [
        {"content": f"User {u} keeps a {COLOURS[u]} notebook number {n} for project {n * 7 + u}", "user_id": f"u{u}"}
        for u in range(6)
        for n in range(8)
    ]
    items += [{"content": f"The office notebook policy number {n} applies to everyone", "visibility": "tenant"}
              for n in range(4)]  # fmt: skip
    items += [{"content": f"Workflow notebook step {n}", "visibility": "workflow", "workflow_id": "wf1"}
              for n in range(2)]  # fmt: skip
    await engram.remember_many(items)


async def test_plan_is_chosen_from_the_scope_and_recorded(engram: Engram) -> None:
    await seed(engram)
    result = await engram.recall("notebook", user_id="u1")
    assert result.plan is not None and result.plan.name == "scope-exact"
    assert result.plan.scope_size == 8 + 4 and "scored exactly" in result.plan.reason
    assert result.items and {i.content.split()[1] for i in result.items if i.content.startswith("User")} == {"1"}
    receipt = await engram.receipt(result.receipt_id)
    assert receipt.request["plan"] == result.plan.model_dump(mode="json")
    both = await engram.recall("notebook", user_id="u2", workflow_id="wf1")
    assert both.plan is not None and both.plan.scope_size == 8 + 4 + 2
    nobody = await engram.recall("notebook")
    assert nobody.plan is not None and nobody.plan.scope_size == 4

    # Over the limit: the tenant's index (once it has one) or the shared one, with the same answers.
    engram.retriever.scopes.exact_limit = 5
    engram.retriever.scopes.forget("acme")
    large = await engram.recall("notebook", user_id="u1")
    assert large.plan is not None and large.plan.name in ("shared-index", "tenant-index")
    assert "over 5" in large.plan.reason
    assert [i.id for i in large.items] == [i.id for i in result.items]


@pytest.mark.parametrize(("user", "workflow"), [("u3", None), (None, "wf1"), ("u0", "wf1"), (None, None)])
async def test_scope_statements_agree_with_the_tenant_wide_ones(
    engram: Engram, user: str | None, workflow: str | None
) -> None:
    await seed(engram)
    assert engram.gateway is not None
    model, dims = engram.gateway.model_id, engram.gateway.dimensions
    vec = (await engram.gateway.embed(["teal notebook project"]))[0]
    req = RecallRequest(query="teal notebook project", user_id=user, workflow_id=workflow)
    f = build_filter("acme", req)
    cfg = preset("hybrid", candidates=50)
    async with engram.db.tenant("acme") as conn:
        scoped = await dense_hits(conn, f, vec, cfg, model_id=model, dims=dims, scope=True)
        wide = await dense_hits(conn, f, vec, cfg, model_id=model, dims=dims)

    def order(hits: list[Hit]) -> list[tuple[float, str]]:  # ties (the hashing embedder has some) by id
        return sorted((-round(h.score, 5), str(h.id)) for h in hits)

    assert scoped and order(scoped) == order(wide)

    # Lexical over the scope's own rows finds exactly the visible memories holding a query word.
    visible = {
        m.id: m for m in (await engram.list(limit=200)).items
        if m.visibility == "tenant" or (m.visibility, m.user_id) == ("user", user)
        or (m.visibility, m.workflow_id) == ("workflow", workflow)
    }  # fmt: skip
    wanted = {i for i, m in visible.items() if {"teal", "notebook", "project"} & set(m.content.lower().split())}
    search = Search(f, cfg, text=req.query, n_docs=60, avgdl=8.0, scope_lexical=True)
    async with engram.db.tenant("acme") as conn:
        hits = await lexical.RETRIEVER.hits(await lexical.RETRIEVER.send(conn, search), search)
    assert {h.id for h in hits} == wanted
    assert all(0 < (h.row.term_share or 0) <= 1 for h in hits)
    if user == "u3":  # "teal" is only u5's: u3's own 8 hold two of the words, tied, above the shared ones
        assert all(visible[h.id].user_id == "u3" for h in hits[:8]) and len({round(h.score, 6) for h in hits[:8]}) == 1
        assert hits[8].score < hits[7].score


async def test_rarer_words_of_the_scope_rank_first_in_scope_lexical(engram: Engram) -> None:
    await engram.remember_many([{"content": f"Invoice {n} was paid by bank transfer", "user_id": "u1"}
                                for n in range(10)])  # fmt: skip
    await engram.remember("The Antwerp invoice was paid in cash", user_id="u1")
    # Other users' memories do not change u1's statistics: "antwerp" is common elsewhere in the tenant.
    await engram.remember_many([{"content": f"Antwerp depot {n} opens at eight", "user_id": "u9"} for n in range(30)])
    result = await engram.recall("Antwerp invoice paid", user_id="u1", preset="lexical")
    assert result.plan is not None and result.plan.name == "scope-exact"
    assert result.items[0].content == "The Antwerp invoice was paid in cash"
    assert all("depot" not in i.content for i in result.items)


async def test_filters_apply_inside_the_scope_when_the_best_rows_fail_them(engram: Engram) -> None:
    # 130 episodic memories close to the query, 3 semantic ones further away: the dense scope statement
    # looks up its best 2 x candidates first, finds too few of the wanted kind, and reads the rest.
    await engram.remember_many([{"content": f"Ticket {n} about the printer jam", "user_id": "u1", "kind": "episodic"}
                                for n in range(130)])  # fmt: skip
    await engram.remember_many([{"content": f"Printer fact {n}: tray two jams with thick paper", "user_id": "u1",
                                 "kind": "semantic"} for n in range(3)])  # fmt: skip
    assert engram.gateway is not None
    vec = (await engram.gateway.embed(["printer jam"]))[0]
    f = build_filter("acme", RecallRequest(query="printer jam", user_id="u1", kinds=["semantic"]))
    async with engram.db.tenant("acme") as conn:
        hits = await dense_hits(conn, f, vec, preset("dense", candidates=50), model_id=engram.gateway.model_id,
                                dims=engram.gateway.dimensions, scope=True)  # fmt: skip
    assert len(hits) == 3
    assert {h.row.kind for h in hits} == {"semantic"}
    result = await engram.recall("printer jam", user_id="u1", kinds=["semantic"], max_items=10)
    assert result.plan is not None and result.plan.name == "scope-exact"
    assert sorted(i.content for i in result.items) == [f"Printer fact {n}: tray two jams with thick paper"
                                                       for n in range(3)]  # fmt: skip


async def test_owners_follow_visibility_changes(engram: Engram) -> None:
    mem = await engram.remember("The blue lanyard opens the server room", user_id="u1")
    assert not (await engram.recall("blue lanyard server room", user_id="u2")).items

    async def posting_owners() -> set[str | None]:
        async with engram.db.tenant("acme") as conn:
            cur = await conn.execute("SELECT DISTINCT scope_owner FROM search_postings WHERE memory_id = %s", [mem.id])
            return {r["scope_owner"] for r in await cur.fetchall()}

    assert await posting_owners() == {"u:u1"}
    await engram.update(mem.id, {"visibility": "tenant"}, expected_revision=mem.revision)
    assert await posting_owners() == {None}  # the postings moved with the memory, its text unchanged
    async with engram.db.tenant("acme") as conn:
        rows = await (
            await conn.execute(
                "SELECT m.scope_owner AS m, e.scope_owner AS e FROM memories m JOIN memory_embeddings e"
                " ON e.tenant_id = m.tenant_id AND e.memory_id = m.id WHERE m.id = %s",
                [mem.id],
            )
        ).fetchall()
    assert rows and all(r["m"] is None and r["e"] is None for r in rows)
    found = await engram.recall("blue lanyard server room", user_id="u2")
    assert [i.content for i in found.items][:1] == ["The blue lanyard opens the server room"]


def test_scope_statements_name_neither_tenant_nor_owner() -> None:
    f = build_filter("acme", RecallRequest(query="x", user_id="u1"))
    assert f.params["owners"] == ["u:u1"]
    stmt = dense.scope_statement("m", "embedding", f.shape, 10, compact=True, context=False)
    lex = lexical.scope_statement(f.shape, False)
    for s in (stmt, lex):
        assert b"acme" not in s and b"u:u1" not in s and b"%(owners)s" in s


async def test_scope_rows_carry_both_cosines_where_the_tenant_has_context_vectors(engram: Engram) -> None:
    await seed(engram)
    # Turns of a session get context vectors (their neighbours' text).
    await engram.remember_many([{"content": f"Ana: the teal notebook holds page {n}", "user_id": "u1",
                                 "session_id": "s1"} for n in range(4)])  # fmt: skip
    assert engram.gateway is not None
    model, dims = engram.gateway.model_id, engram.gateway.dimensions
    vec = (await engram.gateway.embed(["teal notebook page"]))[0]
    f = build_filter("acme", RecallRequest(query="teal notebook page", user_id="u1"))
    cfg = preset("hybrid", candidates=50)

    def cosines(hits: list[Hit]) -> dict[object, tuple[float | None, float | None]]:
        return {h.id: (_rounded(h.row.cos_self), _rounded(h.row.cos_context)) for h in hits}

    async with engram.db.tenant("acme") as conn:
        got = {}
        for context in (False, True):  # the own vectors, then the context vectors, ranked by
            scoped = await dense_hits(
                conn, f, vec, cfg, model_id=model, dims=dims, context=context, tenant_context=True, scope=True
            )
            wide = await dense_hits(conn, f, vec, cfg, model_id=model, dims=dims, context=context, tenant_context=True)
            assert scoped and cosines(scoped) == cosines(wide)
            got[context] = cosines(scoped)
        # Read as for a tenant without context vectors, the rows carry the own cosine alone.
        plain = await dense_hits(conn, f, vec, cfg, model_id=model, dims=dims, scope=True)
    assert sum(c is not None for _, c in got[False].values()) == 4
    assert len(got[True]) == 4  # ranked by context vector: only the turns have one
    assert cosines(plain) == {i: (own, None) for i, (own, _) in got[False].items()}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


async def test_a_scope_reads_its_owners_vectors_from_their_own_index(engram: Engram) -> None:
    await seed(engram)
    assert engram.gateway is not None
    model, dims = engram.gateway.model_id, engram.gateway.dimensions
    f = build_filter("acme", RecallRequest(query="notebook", user_id="u1"))
    assert dense.fits_compact(model, dims, f.params["owners"])
    stmt = dense.scope_statement(model, "embedding", f.shape, 50, compact=True, context=False)
    params = {**f.params, "qv": (await engram.gateway.embed(["notebook"]))[0]}
    async with engram.db.owner() as conn:  # as autovacuum leaves it: the pages all visible, the index costed
        await conn.execute("VACUUM ANALYZE memory_embeddings")
    async with engram.db.tenant("acme", {"enable_seqscan": "off", "enable_bitmapscan": "off"}) as conn:
        plan = "\n".join(r["QUERY PLAN"] for r in await (await conn.execute(b"EXPLAIN " + stmt, params)).fetchall())
    assert "Index Only Scan using memory_embeddings_scope_vectors" in plan, plan

    # An owner whose id is too long for the index's entries is left out of it and read as before.
    long_user = "\U0001f600" * 256  # 256 characters, 1,024 bytes
    assert not dense.fits_compact(model, dims, [f"u:{long_user}"])
    mem = await engram.remember("The long-named user keeps a violet notebook", user_id=long_user)
    result = await engram.recall("violet notebook", user_id=long_user)
    assert result.plan is not None and result.plan.name == "scope-exact"
    assert [i.id for i in result.items][:1] == [mem.id]
    async with engram.db.owner() as conn:
        row = await (await conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_embeddings_scope_vectors'"
        )).fetchone()  # fmt: skip
    assert row is not None and f"<= {dense.COMPACT_BYTES}" in row["indexdef"]


async def test_scope_lexical_reads_the_owners_postings_only(engram: Engram) -> None:
    await seed(engram)
    f = build_filter("acme", RecallRequest(query="teal notebook", user_id="u5"))
    search = Search(f, preset("hybrid"), text="teal notebook", scope_lexical=True, scope_size=12, avgdl=8.0)
    params = {**lexical.parameters(search), "query": search.text, "fts": "english", "n_docs": 12}
    async with engram.db.tenant("acme", {"enable_seqscan": "off"}) as conn:
        cur = await conn.execute(b"EXPLAIN " + lexical.scope_statement(f.shape, False), params)
        plan = "\n".join(r["QUERY PLAN"] for r in await cur.fetchall())
    assert "search_postings_scope_owned" in plan


async def test_scope_lexical_is_planned_once_per_connection(engram: Engram) -> None:
    # Its generic plan looks dearer than the custom ones, so by default every execution was planned again
    # (1.1 ms of planning for 0.3 ms of work at 100,000 memories); a recall's reads force the generic plan.
    await seed(engram)
    cfg = preset("hybrid")
    async with engram.db._pool.connection() as conn:  # one connection, recall-like transactions
        for user in ["u0", "u1", "u2", "u3", "u4", "u5"] * 2:
            f = build_filter("acme", RecallRequest(query="teal notebook", user_id=user))
            search = Search(f, cfg, text="teal notebook", n_docs=12, avgdl=8.0, scope_lexical=True, scope_size=12)
            async with conn.transaction():
                await recall_settings_here(conn, "acme", cfg)
                hits = await lexical.RETRIEVER.hits(await lexical.RETRIEVER.send(conn, search), search)
            assert hits and all(h.row.content and (f"User {user[1]} " in h.row.content or "office" in h.row.content)
                                for h in hits)  # fmt: skip
        plans = await plans_of(conn, "tq AS MATERIALIZED")
    assert len(plans) == 1 and plans[0][0] >= 3 and plans[0][1] == 0


async def owner_plan(engram: Engram, owner: str, query: str, workflow_id: str | None = None) -> str:
    """EXPLAIN of a large owner's dense statement (``dense.owner_statement``) for a user's recall, with the
    settings the dense side runs it under."""
    assert engram.gateway is not None
    model, dims = engram.gateway.model_id, engram.gateway.dimensions
    f = build_filter("acme", RecallRequest(query=query, user_id=owner[2:], workflow_id=workflow_id))
    stmt = dense.owner_statement(model, dims, "embedding", "acme", owner, f.shape, 10)
    vec = (await engram.gateway.embed([query]))[0]
    async with engram.db.tenant("acme", {"enable_seqscan": "off", "enable_sort": "off"}) as conn:
        rows = await (await conn.execute(b"EXPLAIN " + stmt, {**f.params, "qv": vec})).fetchall()
    return "\n".join(r["QUERY PLAN"] for r in rows)


async def test_a_large_owner_is_read_through_its_own_index(engram: Engram) -> None:
    await engram.remember_many(
        [{"content": f"Owner note {n} about topic {n % 7}", "user_id": "big"} for n in range(40)]
    )
    await engram.remember_many(
        [{"content": f"Shared note {n} about topic 3", "visibility": "tenant"} for n in range(3)]
    )
    await engram.remember_many([{"content": f"Workflow note {n} about topic 3", "visibility": "workflow",
                                 "workflow_id": "wf"} for n in range(2)])  # fmt: skip
    await engram.remember_many([{"content": f"Other note {n} about topic 3", "user_id": "small"} for n in range(5)])
    # Owned nearly entirely: the owner gets an index, the tenant none (its shared part is small).
    assert await engram.index_large_tenants(threshold=10, owner_threshold=20) == ["acme"]
    async with engram.db.tenant("acme") as conn:
        assert not (await engram.retriever.read_corpus(conn, "acme")).own_index
    scopes = engram.retriever.scopes
    scopes.exact_limit = 1000
    exact = await engram.recall("note about topic 3", user_id="big", workflow_id="wf", max_items=20)
    scopes.exact_limit = 10
    scopes.forget("acme")
    indexed = await engram.recall("note about topic 3", user_id="big", workflow_id="wf", max_items=20)
    assert exact.plan is not None and exact.plan.name == "scope-exact"
    assert indexed.plan is not None and indexed.plan.name == "owner-index" and indexed.plan.index_owner == "u:big"
    assert [i.id for i in indexed.items] == [i.id for i in exact.items]
    # An exact scan, and a walk of a graph the scope fills, return fewer rows (twice the 20 items here), and
    # the receipt says so.
    assert exact.plan.dense_rows == indexed.plan.dense_rows == 40
    assert "the exact scan returns its best 40 of the 50" in exact.plan.reason
    assert "the walk of a graph the scope fills returns its best 40 of the 50" in indexed.plan.reason
    for done in (exact, indexed):
        assert len((await engram.receipt(done.receipt_id)).retrievers["dense"]) == 40
    assert {i.content.split()[0] for i in indexed.items} >= {"Owner", "Shared", "Workflow"}
    assert all(not i.content.startswith("Other") for i in indexed.items)
    # The owner's part can be served by its index alone (the planner picks it once the owner is large).
    assert engram.gateway is not None
    model = engram.gateway.model_id
    plan = await owner_plan(engram, "u:big", "note about topic 3", workflow_id="wf")
    assert owner_index_name(model, "acme", "u:big") in plan
    scopes.forget("acme")
    small = await engram.recall("note about topic 3", user_id="small", max_items=20)
    assert small.plan is not None and small.plan.name == "scope-exact"  # 3 shared + 5 own


async def test_owner_indexes_name_their_owner_apart(engram: Engram) -> None:
    # Every plan on memory_embeddings weighs each of its indexes: a plain equality naming another owner is
    # refuted by evaluating it, index by index; the IS TRUE form is set aside at once (docs/retrieval.md).
    # Only an owner with context vectors gets a context index (an empty one would cost every plan too).
    chat = [
        {"content": f"Chat line {n} about topic {n % 5}", "user_id": "talker", "session_id": "s1"} for n in range(25)
    ]
    assert not [r for r in await engram.remember_many(chat) if isinstance(r, Exception)]
    await engram.remember_many([{"content": f"Note {n} about topic {n % 5}", "user_id": "writer"} for n in range(25)])
    assert await engram.index_large_tenants(threshold=10**6, owner_threshold=20) == ["acme"]
    assert engram.gateway is not None
    model = engram.gateway.model_id
    async with engram.db.owner() as conn:
        cur = await conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory_embeddings'")
        defs = {r["indexname"]: r["indexdef"] for r in await cur.fetchall()}
    for owner in ("u:talker", "u:writer"):
        assert f"((scope_owner = '{owner}'::text) IS TRUE)" in defs[owner_index_name(model, "acme", owner)]
    assert owner_index_name(model, "acme", "u:talker", context=True) in defs
    assert owner_index_name(model, "acme", "u:writer", context=True) not in defs
    for owner, other in (("u:talker", "u:writer"), ("u:writer", "u:talker")):
        plan = await owner_plan(engram, owner, "topic 3")
        assert owner_index_name(model, "acme", owner) in plan and owner_index_name(model, "acme", other) not in plan


async def test_a_small_scope_window_still_falls_back_past_archived_rows(engram: Engram) -> None:
    # A scope's statements filter only their best 1.5 x candidates first (``filter.scope_window``): when the
    # best rows are archived the rest is filtered too, on both sides, and the answer is the same.
    strong = [await engram.remember(f"quokka quokka quokka sighting number {n}", user_id="u1") for n in range(5)]
    weak = [await engram.remember(f"one quokka in the garden, note {n}", user_id="u1") for n in range(3)]
    for m in strong[1:]:
        await engram.archive(m.id)
    assert engram.gateway is not None
    model, dims = engram.gateway.model_id, engram.gateway.dimensions
    vec = (await engram.gateway.embed(["quokka quokka quokka sighting"]))[0]
    cfg = preset("hybrid", candidates=2)  # a window of 3 rows, 4 of the best 5 archived
    f = build_filter("acme", RecallRequest(query="quokka sighting", user_id="u1"))
    async with engram.db.tenant("acme") as conn:
        for table, least in (("search_postings", 9), ("memory_embeddings", 8)):  # the archived rows' are there
            cur = await conn.execute(f"SELECT count(*) AS n FROM {table} WHERE scope_owner = 'u:u1'")
            assert (await cur.fetchone() or {}).get("n", 0) >= least
        search = Search(f, cfg, text="quokka sighting", n_docs=8, avgdl=6.0, scope_lexical=True, scope_size=4)
        lexical_found = await lexical.RETRIEVER.hits(await lexical.RETRIEVER.send(conn, search), search)
        dense_found = await dense_hits(conn, f, vec, cfg, model_id=model, dims=dims, scope=True)
    active = {strong[0].id} | {m.id for m in weak}
    for found in (lexical_found, dense_found):
        assert len(found) == 2 and {h.id for h in found} <= active
        assert found[0].id == strong[0].id


async def test_a_small_scope_in_a_large_tenant_reads_as_many_lexical_rows_as_dense(engram: Engram) -> None:
    # In a large tenant a small scope's BM25F is exact over the scope, as its dense scan is: beside the
    # dense side, lexical reads the rows of as many memories as the exact scan returns (``dense_rows``), and
    # the next ones of its ranking as their scores alone, kept where the dense side found the memory.
    # Alone, it reads all the candidates.
    assert engram.gateway is not None
    filler = [f"Harbour logistics memo {n} for berth {n % 90}" for n in range(2_000)]
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(len(filler), engram.gateway.dimensions)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    async with engram.db.tenant("acme") as conn:
        await bulk.load(
            conn, "acme", engram.gateway.model_id, ids=[new_id() for _ in filler],
            users=[f"other{n % 40}" for n in range(len(filler))], contents=filler,
            hashes=[content_hash(c) for c in filler], vectors=vectors,
        )  # fmt: skip
    mine = [{"content": f"The pelican count at lake {n} was {n * 3} birds", "user_id": "u1"} for n in range(60)]
    assert not [r for r in await engram.remember_many(mine) if isinstance(r, Exception)]
    large = {"lexical_postings_budget": 100}  # a tenant of 20 x 100 memories or more is large
    both = await engram.recall("pelican count", user_id="u1", config=preset("hybrid", **large))
    assert both.plan is not None and both.plan.name == "scope-exact"
    assert both.plan.dense_rows == both.plan.lexical_rows == 25 and "so does BM25F over the scope" in both.plan.reason
    lists = (await engram.receipt(both.receipt_id)).retrievers
    assert len(lists["dense"]) == 25 and 25 < len(lists["lexical"]) <= 50
    dense_ids = {h["id"] for h in lists["dense"]}
    tail = [h["id"] for h in lists["lexical"][25:]]
    assert tail and set(tail) <= dense_ids
    alone = await engram.recall("pelican count", user_id="u1", config=preset("lexical", **large))
    assert alone.plan is not None and alone.plan.lexical_rows is None
    full = [h["id"] for h in (await engram.receipt(alone.receipt_id)).retrievers["lexical"]]
    assert len(full) == 50
    # The tail's memories keep their BM25F, in the order of the full ranking, and nothing else is lost but
    # the memories of that tail the dense side did not find.
    assert [h["id"] for h in lists["lexical"]] == [i for i in full if i in full[:25] or i in dense_ids]
    # The statement itself, with and without the query vector (an embedder elsewhere answers later): the
    # first 25 rows read their memories, the next 25 their scores alone, in the full ranking's order.
    f = build_filter("acme", RecallRequest(query="pelican count", user_id="u1"))
    async with engram.db.tenant("acme") as conn:
        corpus = await engram.retriever.read_corpus(conn, "acme")
    search = Search(f, preset("hybrid", **large), text="pelican count", n_docs=corpus.n_docs, avgdl=corpus.avgdl,
                    scope_lexical=True, scope_size=60, lexical_rows=25)  # fmt: skip
    vector = (await engram.gateway.embed(["pelican count"]))[0]
    for given in (None, vector):
        asked = replace(search, vector=given, model_id=engram.gateway.model_id if given is not None else None)
        async with engram.db.reads("acme", recall_settings(asked.cfg)) as conn:
            sent = await lexical.RETRIEVER.send(conn, asked)
        rows, tail = await lexical.RETRIEVER.hits_and_tail(sent, asked)
        assert [str(h.id) for h in rows + tail] == full
        assert all(h.row.content and h.row.scored == (given is not None) for h in rows)
        assert all(h.row.content is None and h.row.cos_self is None for h in tail)
