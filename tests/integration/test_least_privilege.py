"""Least privilege in PostgreSQL (docs/security.md): the pool logs in as a role that row-level security
holds, however a pooled connection is abused; RLS is forced on every tenant table; nothing runs with the
owner's rights."""

from __future__ import annotations

import psycopg
import pytest
from pydantic import SecretStr

from engram import Engram, HashingEmbedder, StoreUnavailable
from tests.conftest import settings_for

TENANT_TABLES = (
    "tenants", "memories", "memory_revisions", "memory_embeddings", "embedding_jobs", "relations", "audit_events",
    "api_keys", "search_postings", "recall_receipts", "pii_vault",
    "workflow_states", "workflow_state_revisions", "outbox_actions", "session_turns", "scheduled_runs",
    "pii_vault_subjects",
)  # fmt: skip


async def test_the_pool_logs_in_as_a_role_rls_holds(engram: Engram) -> None:
    async with engram.db.app() as conn:
        row = await (
            await conn.execute(
                "SELECT session_user AS login, r.rolsuper, r.rolbypassrls,"
                " pg_has_role(session_user, c.relowner, 'MEMBER') AS owner"
                " FROM pg_roles r, pg_class c WHERE r.rolname = session_user AND c.oid = 'memories'::regclass"
            )
        ).fetchone()
    assert row == {"login": "engram_app", "rolsuper": False, "rolbypassrls": False, "owner": False}


async def test_no_role_change_on_a_pooled_connection_reaches_another_tenant(engram: Engram) -> None:
    await engram.remember("globex secret", tenant="globex", visibility="tenant")
    await engram.remember("acme note", tenant="acme", visibility="tenant")
    async with engram.db.app(transaction=False) as conn:
        await conn.execute("RESET ROLE")
        for table in ("memories", "memory_revisions", "audit_events", "search_postings", "api_keys"):
            n = await (await conn.execute(f"SELECT count(*) AS n FROM {table}")).fetchone()
            assert n == {"n": 0}, table
        await conn.execute("SELECT set_config('engram.tenant_id', 'acme', false)")
        rows = await (await conn.execute("SELECT content FROM memories")).fetchall()
        assert [r["content"] for r in rows] == ["acme note"]  # its own tenant only, by name
        await conn.execute("RESET engram.tenant_id")
        for role in ("postgres", "pg_read_all_data", "pg_write_all_data"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                await conn.execute(f"SET ROLE {role}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await conn.execute("SET SESSION AUTHORIZATION postgres")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await conn.execute("ALTER TABLE memories NO FORCE ROW LEVEL SECURITY")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # a policy cannot be switched off either
            await conn.execute("SET row_security = off; SELECT * FROM memories")
        await conn.execute("RESET ROLE")  # leave the connection as the pool expects it
        await conn.execute("SET ROLE engram_app")


async def test_row_level_security_is_forced_on_every_tenant_table(engram: Engram) -> None:
    async with engram.db.owner() as conn:
        rows = await (
            await conn.execute(
                "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c"
                " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id'"
                " WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace ORDER BY c.relname"
            )
        ).fetchall()
    assert {r["relname"] for r in rows} == set(TENANT_TABLES)
    assert all(r["relrowsecurity"] and r["relforcerowsecurity"] for r in rows), rows


async def test_no_function_runs_with_the_owners_rights(engram: Engram) -> None:
    async with engram.db.owner() as conn:
        definers = await (
            await conn.execute(
                "SELECT p.proname, p.proconfig FROM pg_proc p"
                " WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef"
            )
        ).fetchall()
    assert definers == [], (
        "a SECURITY DEFINER function must pin search_path (pg_catalog, ..., pg_temp) and "
        f"check its rows' tenant: {definers}"
    )


async def test_a_key_is_found_by_its_hash_and_nothing_else(engram: Engram) -> None:
    made = await engram.create_key({"role": "agent"}, tenant="acme")
    await engram.create_key({"role": "admin"}, tenant="globex")
    who = await engram.authenticate(made.key)
    assert (who.tenant_id, who.role, who.key_id) == ("acme", "agent", made.id)
    async with engram.db.app() as conn:  # no tenant, no hash named: no key visible
        assert await (await conn.execute("SELECT count(*) AS n FROM api_keys")).fetchone() == {"n": 0}
        await conn.execute("SELECT set_config('engram.key_hash', 'not-a-hash', true)")
        assert await (await conn.execute("SELECT count(*) AS n FROM api_keys")).fetchone() == {"n": 0}


async def test_the_service_refuses_to_log_in_as_the_owner(database_url: str) -> None:
    owner = settings_for(database_url).owner_database_url
    settings = settings_for(database_url).model_copy(update={"database_url": owner})
    with pytest.raises(StoreUnavailable) as caught:
        await Engram.open(settings, embedder=HashingEmbedder())
    assert "superuser" in caught.value.message and "ENGRAM_OWNER_DATABASE_URL" in caught.value.message


async def test_a_separate_login_granted_engram_app_serves(database_url: str) -> None:
    """The documented external set-up: a login role of its own, granted engram_app, and the owner's URL."""
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS engram_service_test")
        admin.execute("CREATE ROLE engram_service_test LOGIN PASSWORD 'svc-secret' IN ROLE engram_app")
    try:
        service = database_url.replace("postgresql://postgres:@", "postgresql://engram_service_test:svc-secret@")
        settings = settings_for(database_url).model_copy(update={"database_url": SecretStr(service)})
        async with await Engram.open(settings, embedder=HashingEmbedder(), tenant="acme") as engram:
            w = await engram.remember("served by a login of its own", visibility="tenant")
            assert (await engram.get(w.id)).content == "served by a login of its own"
            async with engram.db.app() as conn:
                who = await (await conn.execute("SELECT session_user AS s, current_user AS c")).fetchone()
            assert who == {"s": "engram_service_test", "c": "engram_app"}
    finally:
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute("DROP OWNED BY engram_service_test")
            admin.execute("DROP ROLE engram_service_test")
