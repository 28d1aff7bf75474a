"""Migrations: from an empty database, re-run as a no-op, edits detected, external databases told to migrate."""

from __future__ import annotations

import psycopg
import pydantic
import pytest
from psycopg.rows import dict_row

from engram import Engram, HashingEmbedder, MigrationError, Settings
from engram.store.embedded import EmbeddedPostgres
from engram.store.migrate import Migration, applied, available, migrate
from tests.conftest import settings_for


async def connect(url: str) -> psycopg.AsyncConnection:  # type: ignore[type-arg]
    return await psycopg.AsyncConnection.connect(url, autocommit=True, row_factory=dict_row)


async def test_from_empty_then_noop(empty_database_url: str) -> None:
    async with await connect(empty_database_url) as conn:
        done = await migrate(conn)
        assert [m.version for m in done] == [m.version for m in available()]
        assert await migrate(conn) == []
        versions = await applied(conn)
        assert sorted(versions) == [m.version for m in available()]
        tables = await (
            await conn.execute("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'memories'")
        ).fetchone()
        assert tables is not None and tables["n"] == 1


async def test_edited_migration_is_refused(empty_database_url: str) -> None:
    async with await connect(empty_database_url) as conn:
        await migrate(conn)
        first = available()[0]
        edited = Migration(first.version, first.name, first.sql + "\n-- edited")
        with pytest.raises(MigrationError, match="changed after it was applied"):
            await migrate(conn, [edited])


async def test_failed_migration_leaves_nothing_half_applied(empty_database_url: str) -> None:
    async with await connect(empty_database_url) as conn:
        bad = Migration(9001, "broken", "CREATE TABLE half_done (x int); SELECT no_such_function();")
        with pytest.raises(MigrationError, match="9001_broken"):
            await migrate(conn, [bad])
        row = await (await conn.execute("SELECT to_regclass('half_done') IS NULL AS gone")).fetchone()
        assert row is not None and row["gone"]
        assert 9001 not in await applied(conn)


async def test_external_database_must_be_migrated_first(empty_database_url: str) -> None:
    with pytest.raises(MigrationError, match="engram migrate"):
        await Engram.open(settings_for(empty_database_url), embedder=HashingEmbedder())
    mem = await Engram.open(settings_for(empty_database_url), embedder=HashingEmbedder(), run_migrations=True)
    await mem.close()


def test_embedded_server_gets_its_shared_buffers(pg_server: EmbeddedPostgres) -> None:
    from engram.sizing import memory_bytes, shared_buffers_kb

    with psycopg.connect(pg_server.admin_conninfo(), autocommit=True) as conn:
        row = conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers')) / 1024").fetchone()
    assert row is not None and row[0] == shared_buffers_kb("auto") >= 128 * 1024
    assert memory_bytes() > 0 and shared_buffers_kb("auto") in {
        128 * 1024,
        2 * 1024 * 1024,
        memory_bytes() // 4 // 1024,
    }
    assert shared_buffers_kb("512MB") == 512 * 1024 and shared_buffers_kb("2GB") == 2 * 1024 * 1024
    assert shared_buffers_kb("1001kB") == 1000  # whole 8 kB blocks, as PostgreSQL stores it
    for bad in ("lots", "0MB", "64kB", "100000GB"):
        with pytest.raises(ValueError):
            shared_buffers_kb(bad)
    with pytest.raises(pydantic.ValidationError, match="embedded_shared_buffers"):
        Settings(embedded_shared_buffers="0MB")


async def test_receipts_index_takes_inserts_directly(engram: Engram) -> None:
    async with engram.db.owner() as conn:
        row = await (
            await conn.execute("SELECT reloptions FROM pg_class WHERE relname = 'recall_receipts_selected_ids'")
        ).fetchone()
    assert row is not None and "fastupdate=off" in row["reloptions"]


async def test_receipts_are_stored_uncompressed(engram: Engram) -> None:
    # pglz on every receipt's JSON was server work beside the recalls that followed (migration 0024).
    await engram.remember_many(
        [{"content": f"Pallet {n} of order {n * 7} cleared customs in Antwerp"} for n in range(12)]
    )
    result = await engram.recall("pallet customs Antwerp", max_items=5)
    await engram.retriever.receipts.settle()
    async with engram.db.owner() as conn:
        row = await (
            await conn.execute(
                "SELECT pg_column_size(r.*) AS size, pg_column_compression(request) AS request,"
                " pg_column_compression(retrievers) AS retrievers, pg_column_compression(selected) AS selected"
                " FROM recall_receipts r WHERE id = %s",
                [result.receipt_id],
            )
        ).fetchone()
    # Past the default 2 KB at which PostgreSQL compresses (one larger than 8 KB still has its largest column
    # compressed: the row must fit its page).
    assert row is not None and row["size"] > 3000
    assert (row["request"], row["retrievers"], row["selected"]) == (None, None, None)


async def test_the_trust_migration_mends_what_earlier_versions_stored(empty_database_url: str) -> None:
    """Up to 0010 a time outside years 1..9999 in UTC could be stored, and broke every read of its tenant;
    confidence was a real. 0011 clamps the one and makes the other come back as it was sent."""
    before = [m for m in available() if m.version <= 10]
    async with await connect(empty_database_url) as conn:
        await migrate(conn, before)
        await conn.execute(
            "INSERT INTO memories (tenant_id, id, kind, content, content_hash, valid_from, confidence)"
            " VALUES ('acme', gen_random_uuid(), 'episodic', 'poisoned', repeat('a', 64),"
            " '0001-01-01 00:00:00+14'::timestamptz, 0.8),"
            " ('acme', gen_random_uuid(), 'episodic', 'fine', repeat('b', 64), now(), 0.8)"
        )
        await migrate(conn)
    async with await Engram.open(settings_for(empty_database_url), embedder=HashingEmbedder(), tenant="acme") as m:
        page = await m.list()
        assert sorted(x.content for x in page.items) == ["fine", "poisoned"]
        poisoned = next(x for x in page.items if x.content == "poisoned")
        assert poisoned.valid_from.year == 1 and poisoned.confidence == 0.8
        assert (await m.recall("poisoned fine")).items


async def test_owner_indexes_of_the_plain_form_are_dropped(empty_database_url: str) -> None:
    """Before 0025 an owner's HNSW index named its owner with a plain equality, which every plan on
    memory_embeddings evaluated against the others; 0025 drops those (maintenance builds the new form) and
    leaves every other index alone."""
    base = "memory_embeddings_hnsw_" + "0" * 16
    plain = [base + "_o" + "a" * 12 + "_h32", base + "_o" + "b" * 12 + "_ctx_h32"]
    kept = [base + "_t" + "c" * 12 + "_h32", base + "_s" + "d" * 12 + "_h32"]
    async with await connect(empty_database_url) as conn:
        await migrate(conn, [m for m in available() if m.version < 25])
        for name in plain + kept:
            await conn.execute(
                f"CREATE INDEX {name} ON memory_embeddings USING hnsw ((embedding::halfvec(3)) halfvec_ip_ops)"
                " WHERE model_id = 'm' AND tenant_id = 'acme'"
            )
        await migrate(conn)
        rows = await (
            await conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE %s", [base + "%"])
        ).fetchall()
    assert sorted(r["indexname"] for r in rows) == sorted(kept)
