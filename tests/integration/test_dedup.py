"""Deduplication: repeats merge into the stored memory (exact, near, within a batch), racing writers of one
text leave one memory, and what only looks alike (another number, another scope, a fact) stays apart."""

from __future__ import annotations

import asyncio

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.rows import dict_row

from engram import Engram
from engram.model import WriteResult
from engram.store import dedup


async def test_an_exact_repeat_merges_into_the_stored_memory(engram: Engram) -> None:
    first = await engram.remember("Jane prefers email for invoices", confidence=0.7, tags=["billing"], user_id="u1")
    again = await engram.remember(
        "Jane  prefers email for invoices", confidence=0.9, tags=["contact"], user_id="u1",
        source={"type": "tool_result", "ref": "crm://jane"}, external_id="crm-1",
    )  # fmt: skip
    assert again.id == first.id and again.merged_into == first.id and not again.replayed
    assert "merged_exact_duplicate" in again.reasons and again.admission.decision == "merge"
    stored = await engram.get(first.id, user_id="u1")
    assert (stored.revision, stored.confidence, stored.tags) == (2, 0.9, ["billing", "contact"])
    assert [(s.type, s.ref, s.external_id, s.similarity) for s in stored.sources] == [
        ("tool_result", "crm://jane", "crm-1", 1.0)
    ]
    assert [h.change for h in await engram.history(first.id, user_id="u1")] == ["created", "merged"]
    retry = await engram.remember("Jane prefers email for invoices", user_id="u1", external_id="crm-1")
    assert retry.replayed and (await engram.get(first.id, user_id="u1")).revision == 2
    page = await engram.list(user_id="u1")
    assert [m.id for m in page.items] == [first.id]


async def test_a_near_repeat_merges_but_another_number_or_scope_does_not(engram: Engram) -> None:
    await engram.update_admission_policy({"near_duplicate_similarity": 0.8})
    first = await engram.remember("The staging deploy runs every Wednesday evening", user_id="u1")
    near = await engram.remember("The staging deploy runs every Wednesday evening.", user_id="u1")
    assert near.merged_into == first.id and "merged_near_duplicate" in near.reasons
    invoice = await engram.remember("Invoice 77 was paid in full", user_id="u1")
    other = await engram.remember("Invoice 78 was paid in full", user_id="u1")
    assert other.merged_into is None and other.id != invoice.id
    elsewhere = await engram.remember("The staging deploy runs every Wednesday evening", user_id="u2")
    assert elsewhere.merged_into is None
    fact = await engram.remember("The staging deploy runs every Wednesday evening", user_id="u1", fact_key="deploy")
    assert fact.merged_into is None and fact.id != first.id


async def test_repeats_within_one_batch_leave_one_memory(engram: Engram) -> None:
    results = await engram.remember_many(
        [{"content": "Bob moved to Lisbon"}, {"content": "Bob   moved to Lisbon"}, {"content": "Bob likes tea"}]
    )
    assert all(isinstance(r, WriteResult) for r in results)
    ids = [r.id for r in results if isinstance(r, WriteResult)]
    assert ids[0] == ids[1] != ids[2]
    assert len((await engram.list()).items) == 2


async def test_racing_writers_of_one_text_leave_exactly_one_memory(engram: Engram) -> None:
    results = await asyncio.gather(
        *(engram.remember("The VPN certificate expires on 2027-03-01", user_id="u9") for _ in range(20))
    )
    assert len({r.id for r in results}) == 1
    assert sum(r.merged_into is None for r in results) == 1
    stored = await engram.get(results[0].id, user_id="u9")
    assert stored.revision == 20 and len(stored.sources) == 19
    assert len((await engram.list(user_id="u9")).items) == 1


async def test_racing_writers_of_near_duplicates_leave_exactly_one_memory(engram: Engram) -> None:
    """Twenty writers at once, each with its own wording of one fact (other punctuation and spacing: other
    content hashes, the same meaning): the scope lock makes each see the others' rows."""
    variants = [
        "The VPN certificate expires on 2027-03-01" + end + " " * (i % 3)
        for i, end in enumerate(["", ".", "!", "!!", "...", " .", ";", " !", "?!", ".."] * 2)
    ]
    assert len({v.strip() for v in variants}) == 10
    results = await asyncio.gather(*(engram.remember(v, user_id="u8") for v in variants))
    assert len({r.id for r in results}) == 1
    assert sum(r.merged_into is None for r in results) == 1
    assert {c for r in results for c in r.reasons} >= {"merged_near_duplicate", "merged_exact_duplicate"}
    assert len((await engram.list(user_id="u8")).items) == 1


async def test_the_transcript_profile_keeps_every_repeat(engram: Engram) -> None:
    await engram.update_admission_policy({"profile": "transcript"})
    a = await engram.remember("yeah, see you tomorrow")
    b = await engram.remember("yeah, see you tomorrow")
    assert a.id != b.id and b.merged_into is None


async def test_a_single_writes_duplicate_search_reads_each_vector_once(engram: Engram, database_url: str) -> None:
    """The database ranks the scope's recent window with one index step per vector, whichever index of
    memory_embeddings the planner picks (on a table grown since its statistics, it once scanned the tenant's
    vectors for each one). Here the primary key is dropped, in a transaction rolled back, to force the other."""
    await engram.remember_many([{"content": f"ticket {i} closed by the night shift crew"} for i in range(150)])
    gateway = engram.gateway
    assert gateway is not None
    [vector] = await gateway.embed(["a ticket closed by the night shift"])
    async with await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as conn:
        await register_vector_async(conn)
        await conn.execute("SELECT set_config('engram.tenant_id', 'acme', false)")
        group = await (
            await conn.execute("SELECT DISTINCT scope_key, kind, visibility FROM memories WHERE tenant_id = 'acme'")
        ).fetchall()
        assert len(group) == 1
        params = {
            "vector": vector, "tenant_id": "acme", "scope": group[0]["scope_key"], "kind": group[0]["kind"],
            "visibility": group[0]["visibility"], "model": gateway.model_id, "window": dedup.NEAR_WINDOW,
        }  # fmt: skip
        async with conn.transaction(force_rollback=True):
            await conn.execute("ALTER TABLE memory_embeddings DROP CONSTRAINT memory_embeddings_pkey")
            row = await (
                await conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + dedup.NEAREST, params)
            ).fetchone()
    assert row is not None
    plan = row["QUERY PLAN"][0]["Plan"]
    assert plan["Actual Rows"] == 1
    # A few buffer hits per vector (an index descent and the heap); a scan of the tenant's vectors was ~100.
    assert plan["Shared Hit Blocks"] < 150 * 8
