"""Tenant isolation in the database itself (row-level security) and the Citus-ready key shape."""

from __future__ import annotations

import psycopg
import pytest

from engram import Engram, NotFoundError, PermissionDenied
from engram.store.database import Database


async def test_rls_blocks_an_unfiltered_cross_tenant_query(engram: Engram) -> None:
    await engram.remember("acme secret roadmap", tenant="acme")
    await engram.remember("globex secret roadmap", tenant="globex")
    await engram.remember("globex second note", tenant="globex")
    async with engram.db.tenant("acme") as conn:
        who = await (await conn.execute("SELECT current_user AS u")).fetchone()
        assert who is not None and who["u"] == "engram_app"
        # Deliberately no tenant filter at all.
        rows = await (await conn.execute("SELECT tenant_id, content FROM memories")).fetchall()
        assert [r["content"] for r in rows] == ["acme secret roadmap"]
        revs = await (await conn.execute("SELECT DISTINCT tenant_id FROM memory_revisions")).fetchall()
        assert [r["tenant_id"] for r in revs] == ["acme"]
        audit = await (await conn.execute("SELECT DISTINCT tenant_id FROM audit_events")).fetchall()
        assert [r["tenant_id"] for r in audit] == ["acme"]
    async with engram.db.app() as conn:  # no tenant set: nothing visible
        rows = await (await conn.execute("SELECT count(*) AS n FROM memories")).fetchall()
        assert rows[0]["n"] == 0


async def test_rls_refuses_writes_into_another_tenant(engram: Engram) -> None:
    other = await engram.remember("globex note", tenant="globex")
    with pytest.raises(PermissionDenied):  # the database's refusal, translated at the store boundary
        async with engram.db.tenant("acme") as conn:
            await conn.execute(
                "INSERT INTO audit_events (tenant_id, id, actor, action) VALUES ('globex', gen_random_uuid(), 'x', 'y')"
            )
    async with engram.db.tenant("acme") as conn:
        cur = await conn.execute("UPDATE memories SET content = 'pwned' WHERE id = %s", [other.id])
        assert cur.rowcount == 0
        cur = await conn.execute("DELETE FROM memories WHERE id = %s", [other.id])
        assert cur.rowcount == 0
    assert (await engram.get(other.id, tenant="globex")).content == "globex note"


async def test_another_tenants_id_is_not_found(engram: Engram) -> None:
    other = await engram.remember("globex note", tenant="globex")
    for call in (engram.get, engram.history, engram.archive, engram.delete):
        with pytest.raises(NotFoundError):
            await call(other.id, tenant="acme")  # type: ignore[operator]
    with pytest.raises(NotFoundError):
        await engram.update(other.id, {"content": "x y"}, expected_revision=1, tenant="acme")


async def test_service_role_cannot_bypass_rls(engram: Engram) -> None:
    async with engram.db.app() as conn:
        row = await (
            await conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        ).fetchone()
        owner = await (await conn.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'memories'")).fetchone()
    assert row is not None and owner is not None
    assert row["rolsuper"] is False and row["rolbypassrls"] is False
    assert owner["tableowner"] != "engram_app"


TENANT_TABLES = (
    "tenants", "memories", "memory_revisions", "memory_embeddings", "embedding_jobs", "relations",
    "audit_events", "api_keys", "recall_receipts", "pii_vault",
    "workflow_states", "workflow_state_revisions", "outbox_actions", "session_turns", "scheduled_runs",
    "pii_vault_subjects",
)  # fmt: skip


REFERENCE_TABLES = {"embedding_models"}


async def test_every_key_includes_tenant_id_so_the_schema_stays_distributable(engram: Engram) -> None:
    """SPEC 10: Citus distributes by tenant_id; every PK, unique and FK must contain it."""
    async with engram.db.owner() as conn:
        rows = await (
            await conn.execute(
                """
                SELECT c.conrelid::regclass::text AS tbl, c.conname, c.contype,
                       c.confrelid::regclass::text AS ref, array_agg(a.attname::text) AS cols
                  FROM pg_constraint c
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
                 WHERE c.contype IN ('p', 'u', 'f') AND c.conrelid::regclass::text = ANY(%s)
                 GROUP BY 1, 2, 3, 4
                """,
                [list(TENANT_TABLES)],
            )
        ).fetchall()
        idx = await (
            await conn.execute(
                """
                SELECT i.indrelid::regclass::text AS tbl, i.indexrelid::regclass::text AS name,
                       pg_get_indexdef(i.indexrelid) AS def
                  FROM pg_index i WHERE i.indisunique AND i.indrelid::regclass::text = ANY(%s)
                """,
                [list(TENANT_TABLES)],
            )
        ).fetchall()
        rls = await (
            await conn.execute(
                "SELECT relname FROM pg_class WHERE relname = ANY(%s) AND relrowsecurity",
                [list(TENANT_TABLES)],
            )
        ).fetchall()
    assert {r["tbl"] for r in rows if r["contype"] == "p"} == set(TENANT_TABLES)
    for r in rows:
        if r["contype"] == "f" and r["ref"] in REFERENCE_TABLES:
            continue  # a distributed table may reference a Citus reference table by its own key
        assert "tenant_id" in r["cols"], f"{r['tbl']}.{r['conname']} lacks tenant_id"
    for r in idx:
        assert "tenant_id" in r["def"], f"unique index {r['name']} lacks tenant_id"
    assert {r["relname"] for r in rls} == set(TENANT_TABLES)


async def test_tenant_transactions_roll_back_on_autocommit_pool_connections(engram: Engram) -> None:
    mine = await engram.remember("acme transaction note", tenant="acme")
    before = (await engram.get(mine.id, tenant="acme")).importance
    with pytest.raises(psycopg.errors.DivisionByZero):
        async with engram.db.tenant("acme") as conn:
            await conn.execute("UPDATE memories SET importance = 0.01 WHERE id = %s", [mine.id])
            await conn.execute("SELECT 1 / 0")
    assert (await engram.get(mine.id, tenant="acme")).importance == before != 0.01  # rolled back


async def test_pipelined_reads_are_scoped_to_one_implicit_transaction(engram: Engram) -> None:
    mine = await engram.remember("acme pipelined note", tenant="acme")
    before = (await engram.get(mine.id, tenant="acme")).importance
    await engram.remember("globex pipelined note", tenant="globex")
    one = Database(engram.db.conninfo, min_size=1, max_size=1)  # every block below on the same connection
    await one.open()
    try:
        async with one.reads("acme", {"hnsw.ef_search": "77"}) as conn:
            first = await conn.execute("SELECT content FROM memories")  # sent, not yet waited for
            setting = await conn.execute("SELECT current_setting('hnsw.ef_search') AS ef")
            assert [r["content"] for r in await first.fetchall()] == ["acme pipelined note"]
            assert (await setting.fetchone()) == {"ef": "77"}
            # Still the same implicit transaction after a fetch: the tenant and the settings hold.
            later = await conn.execute("SELECT count(*) AS n, current_setting('hnsw.ef_search') AS ef FROM memories")
        assert await later.fetchone() == {"n": 1, "ef": "77"}
        async with one.reads("globex") as conn:  # the settings ended with the block's Sync
            cur = await conn.execute("SELECT content, current_setting('hnsw.ef_search', true) AS ef FROM memories")
        assert [(r["content"], r["ef"]) for r in await cur.fetchall()] == [("globex pipelined note", "")]
        with pytest.raises(psycopg.errors.DivisionByZero):  # one implicit transaction: all of it or nothing
            async with one.reads("acme") as conn:
                await conn.execute("UPDATE memories SET importance = 0.01 WHERE id = %s", [mine.id])
                await (await conn.execute("SELECT 1 / 0")).fetchall()
        assert (await engram.get(mine.id, tenant="acme")).importance == before != 0.01
        async with one.app() as conn:  # the pooled connection is usable again, with no tenant left set
            sql = "SELECT count(*) AS n, current_setting('engram.tenant_id', true) AS t FROM memories"
            assert await (await conn.execute(sql)).fetchone() == {"n": 0, "t": ""}
    finally:
        await one.close()
