"""Personal data on the real write path: placeholders stable per tenant and value in every stored text and
embedding input, the values sealed in the vault (unreadable without its key, rotated, revealed only to the
right role), refused when the policy says so, and recall queries masked the same way."""

from __future__ import annotations

import asyncio
import base64
import os

import psycopg
import pytest
from cryptography.exceptions import InvalidTag

from engram import Engram, PermissionDenied, PolicyRejection
from engram.errors import VaultLocked
from engram.model.access import Principal
from engram.policy import names
from tests.conftest import TEST_VAULT_KEYS, RecordingEmbedder, settings_for

EMAIL = "jane.doe@example.org"
PHONE = "+44 20 7946 0958"
CARD = "4539 1488 0343 6467"
ner = pytest.mark.skipif(not names.available(), reason="the ner extra is not installed")


async def _all_rows(database_url: str) -> list[str]:
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        tables = [r[0] for r in await (await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )).fetchall()]  # fmt: skip
        assert "pii_vault" in tables
        out: list[str] = []
        for table in tables:
            out += [r[0] for r in await (await conn.execute(f"SELECT t::text FROM {table} t")).fetchall()]
        return out


async def test_personal_data_is_stored_and_embedded_as_placeholders(
    recorded: tuple[Engram, RecordingEmbedder], database_url: str
) -> None:
    engram, embedder = recorded
    first = await engram.remember(
        f"Reach Jane at {EMAIL} or {PHONE}; she pays with card {CARD}.",
        summary=f"contact {EMAIL}", metadata={"contact": {"email": EMAIL}}, tags=["vip"], user_id="u1",
    )  # fmt: skip
    assert first.status == "active" and "pii_masked" in first.reasons
    assert {"EMAIL_1", "PHONE_1", "CARD_1"} <= set(first.admission.masked)
    stored = await engram.get(first.id)
    assert "EMAIL_1" in stored.content and "PHONE_1" in stored.content and "CARD_1" in stored.content
    assert stored.summary == "contact EMAIL_1" and stored.metadata == {"contact": {"email": "EMAIL_1"}}
    assert stored.policy.contains_pii
    # The same value is the same placeholder across the tenant (its normal form: case, spacing).
    second = await engram.remember(f"Invoices for {EMAIL.upper()} go out on Mondays", user_id="u2")
    assert "EMAIL_1" in (await engram.get(second.id)).content
    other = await engram.remember("Ask sam@example.org about the export", user_id="u1")
    assert "EMAIL_2" in (await engram.get(other.id)).content

    result = await engram.recall(f"how do I reach {EMAIL}", user_id="u1")
    assert first.id in [i.id for i in result.items]
    receipt = await engram.receipt(result.receipt_id)
    assert EMAIL not in receipt.model_dump_json() and "EMAIL_1" in receipt.query
    for value in (EMAIL, PHONE, CARD, CARD.replace(" ", "")):
        assert not any(value in t for t in embedder.seen), value
        assert not any(value in row for row in await _all_rows(database_url)), value


async def test_reveal_is_for_admins_and_keys_allowed_to(engram: Engram) -> None:
    written = await engram.remember(f"Billing contact is {EMAIL}", visibility="tenant")
    admin = Principal(tenant_id="acme", role="admin")
    shown = await engram.get(written.id, principal=admin, reveal=True)
    assert shown.content == f"Billing contact is {EMAIL}"
    page = await engram.list(principal=admin, reveal=True)
    assert [m.content for m in page.items] == [f"Billing contact is {EMAIL}"]
    agent = Principal(tenant_id="acme", role="agent")
    assert "EMAIL_1" in (await engram.get(written.id, principal=agent)).content
    with pytest.raises(PermissionDenied, match="can_reveal"):
        await engram.get(written.id, principal=agent, reveal=True)
    allowed = Principal(tenant_id="acme", role="agent", can_reveal=True)
    assert EMAIL in (await engram.get(written.id, principal=allowed, reveal=True)).content
    # Each reveal leaves an audit event naming the placeholders, not the values.
    events = [e for e in await engram.history(written.id) if e.change == "created"]
    assert events


async def test_vault_values_do_not_open_without_their_key(database_url: str) -> None:
    async with await Engram.open(settings_for(database_url), tenant="acme", embedding=False) as engram:
        written = await engram.remember(f"Escalations go to {EMAIL}")
    other_key = "other:" + base64.b64encode(os.urandom(32)).decode()
    async with await Engram.open(settings_for(database_url, vault_keys=other_key), tenant="acme", embedding=False) as e:
        assert "EMAIL_1" in (await e.get(written.id)).content  # reading is fine: placeholders
        with pytest.raises(VaultLocked, match="not configured"):
            await e.get(written.id, reveal=True)
    async with await psycopg.AsyncConnection.connect(database_url) as conn:  # altered bytes fail their tag
        # Flip the byte's bits: writing a fixed byte alters nothing when it was that byte already (1 in 256).
        await conn.execute("UPDATE pii_vault SET sealed = set_byte(sealed, 19, get_byte(sealed, 19) # 255)")
    async with await Engram.open(settings_for(database_url), tenant="acme", embedding=False) as engram:
        with pytest.raises(VaultLocked, match="does not open"):
            await engram.get(written.id, reveal=True)


async def test_keys_rotate_without_changing_placeholders(database_url: str) -> None:
    async with await Engram.open(settings_for(database_url), tenant="acme", embedding=False) as engram:
        written = await engram.remember(f"Escalations go to {EMAIL}")
    new_key = "k2:" + base64.b64encode(os.urandom(32)).decode()
    both = f"{new_key},{TEST_VAULT_KEYS}"
    async with await Engram.open(settings_for(database_url, vault_keys=both), tenant="acme", embedding=False) as e:
        again = await e.remember(f"Invoices for {EMAIL}")  # found by the old key's hash before rotating
        assert "EMAIL_1" in (await e.get(again.id)).content
        assert await e.rotate_vault() == 1
        assert await e.rotate_vault() == 0  # nothing left under the old key
    async with await Engram.open(settings_for(database_url, vault_keys=new_key), tenant="acme", embedding=False) as e:
        assert EMAIL in (await e.get(written.id, reveal=True)).content
        third = await e.remember(f"Ping {EMAIL} on Fridays")
        assert "EMAIL_1" in (await e.get(third.id)).content


async def test_the_policy_refuses_personal_data_when_it_says_so(engram: Engram) -> None:
    await engram.update_admission_policy({"pii_retention_required": True})
    with pytest.raises(PolicyRejection) as refused:
        await engram.remember(f"Customer email {EMAIL}")
    assert refused.value.reasons == ["pii_without_retention_reason"] and refused.value.field == "content"
    kept = await engram.remember(f"Customer email {EMAIL}", policy={"retention_reason": "support contact"})
    assert kept.status == "active" and "pii_masked" in kept.reasons
    await engram.update_admission_policy({"pii": "reject"})
    with pytest.raises(PolicyRejection) as rejected:
        await engram.remember("Escalate to ops@example.org", policy={"retention_reason": "support"})
    assert rejected.value.reasons == ["pii"]
    await engram.update_admission_policy({"pii": "off"})
    raw = await engram.remember("Escalate to ops@example.org")
    assert "ops@example.org" in (await engram.get(raw.id)).content


async def test_racing_writers_of_one_value_share_one_placeholder(engram: Engram, database_url: str) -> None:
    results = await asyncio.gather(*[engram.remember(f"Note {i}: write to {EMAIL}") for i in range(12)])
    contents = [(await engram.get(r.id)).content for r in results]
    assert all("EMAIL_1" in c for c in contents)
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        rows = await (await conn.execute("SELECT count(*) FROM pii_vault WHERE kind = 'email'")).fetchone()
    assert rows is not None and rows[0] == 1


async def test_tenants_have_their_own_vaults(engram: Engram) -> None:
    mine = await engram.remember(f"Contact {EMAIL}")
    theirs = await engram.remember(f"Contact {EMAIL}", tenant="globex")
    assert "EMAIL_1" in (await engram.get(theirs.id, tenant="globex")).content
    assert EMAIL in (await engram.get(theirs.id, tenant="globex", reveal=True)).content
    assert EMAIL in (await engram.get(mine.id, reveal=True)).content


@ner
async def test_person_names_are_masked_and_recall_finds_them(engram: Engram) -> None:
    written = await engram.remember(
        "Priya Raman prefers to be contacted by email", user_id="u1", metadata={"customer": "priya raman"}
    )
    stored = await engram.get(written.id)
    assert stored.content == "PERSON_A prefers to be contacted by email"
    assert stored.metadata == {"customer": "PERSON_A"}  # the name, wherever else it is written
    result = await engram.recall("how does Priya Raman want to be contacted?", user_id="u1")
    assert result.items and result.items[0].id == written.id
    assert "PERSON_A" in (await engram.receipt(result.receipt_id)).query


@ner
def test_the_ner_model_loads_and_runs_without_network() -> None:
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise SystemExit('network access attempted')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from engram.policy.names import find_names\n"
        "found = find_names(['Priya Raman called about the refund.'])\n"
        "assert [f.value for f in found[0]] == ['Priya Raman'], found\n"
        "import sys\n"
        "assert 'tldextract' not in sys.modules and 'presidio_analyzer' not in sys.modules\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout


async def test_an_update_is_masked_and_keeps_the_placeholders_it_had(engram: Engram, database_url: str) -> None:
    written = await engram.remember(f"Billing contact is {EMAIL}")
    updated = await engram.update(
        written.id, {"content": f"Billing contact is {EMAIL}, backup {PHONE}"}, expected_revision=1
    )
    assert updated.content == "Billing contact is EMAIL_1, backup PHONE_1"
    assert updated.admission.masked == ["EMAIL_1", "PHONE_1"] and updated.policy.contains_pii
    tagged = await engram.update(written.id, {"tags": ["billing"]}, expected_revision=2)
    assert tagged.admission.masked == ["EMAIL_1", "PHONE_1"]
    shown = await engram.get(written.id, reveal=True)
    assert shown.content == f"Billing contact is {EMAIL}, backup {PHONE}"
    assert not any(PHONE in row for row in await _all_rows(database_url))


async def test_a_rescan_masks_what_was_stored_before_the_policy(engram: Engram, database_url: str) -> None:
    await engram.update_admission_policy({"pii": "off"})
    raw = await engram.remember(f"Escalations go to {EMAIL}")
    other = await engram.remember("The office moves to Porto in March")
    await engram.update_admission_policy({"pii": "mask"})
    report = await engram.rescan(batch=10)
    assert (report.scanned, report.masked, report.redacted, report.quarantined) == (2, 1, 0, 0)
    fixed = await engram.get(raw.id)
    assert fixed.content == "Escalations go to EMAIL_1" and fixed.revision == 2
    assert (await engram.get(raw.id, reveal=True)).content == f"Escalations go to {EMAIL}"
    assert (await engram.get(other.id)).revision == 1
    assert (await engram.rescan(batch=10)).masked == 0
    await engram.update_admission_policy({"pii": "off"})
    later = await engram.remember(f"Invoices go to {EMAIL}")
    await engram.update_admission_policy({"pii": "reject"})
    refused = await engram.rescan(batch=10)  # a placeholder is not personal data: only the raw value is refused
    assert (refused.quarantined, refused.masked) == (1, 0)
    assert (await engram.get(later.id)).status == "quarantined" and (await engram.get(raw.id)).status == "active"


async def test_forgetting_a_user_destroys_their_vault_key_so_backups_cannot_open_their_values(
    database_url: str,
) -> None:
    """Crypto-shredding: a user's values are sealed under their own key, kept outside the database. A copy of
    the sealed rows taken before the forget (a backup) opens with that key before, and with nothing the
    service still has after; another user's values are untouched."""
    from engram.service.keyring import value_aad
    from engram.service.subject_keys import open_sealed

    async with await Engram.open(settings_for(database_url), tenant="acme", embedding=False) as engram:
        await engram.update_admission_policy({"approval": "off"})
        mine = await engram.remember("Write to ann.ward@example.com about the refund", user_id="u1")
        theirs = await engram.remember("Write to bo.lind@example.net about the invoice", user_id="u2")
        shared = await engram.remember("The helpdesk is helpdesk@example.org")  # no user: the tenant keyring
        async with engram.db.owner() as conn:
            query = "SELECT tenant_id, kind, ordinal, subject_key, sealed FROM pii_vault_subjects"
            backup = await (await conn.execute(query)).fetchall()
            tenant_rows = await (await conn.execute("SELECT kind, ordinal, sealed FROM pii_vault")).fetchall()
        assert len(backup) == 2 and sum(r["sealed"] is None for r in tenant_rows) == 2  # only the users' keys
        u1_key = engram.subject_keys.key_id("acme", "u1")
        (u1_row,) = [r for r in backup if r["subject_key"] == u1_key]
        dek = engram.subject_keys.dek(u1_key)
        assert dek is not None
        aad = value_aad("acme", u1_row["kind"], u1_row["ordinal"])
        assert "ann.ward@example.com" in open_sealed(dek, aad, bytes(u1_row["sealed"]))
        assert "ann.ward@example.com" in (await engram.get(mine.id, reveal=True)).content
        assert all(b"ann.ward" not in p.read_bytes() for p in engram.subject_keys.folder.iterdir())

        cert = await engram.forget_subject("u1")
        assert cert.removed["subject_keys"] == 1 and cert.removed["pii_vault_subjects"] == 1
        assert engram.subject_keys.dek(u1_key) is None  # gone from the key store
        # The backup's sealed copy: the tenant keyring cannot open it, and no subject key the service has can.
        with pytest.raises(VaultLocked):
            engram.keyring.open("acme", u1_row["kind"], u1_row["ordinal"], engram.keyring.current.key_id,
                                bytes(u1_row["sealed"]))  # fmt: skip
        for path in engram.subject_keys.folder.glob("sk_*.key"):
            other = engram.subject_keys.dek(path.stem)
            assert other is not None
            with pytest.raises(InvalidTag):
                open_sealed(other, aad, bytes(u1_row["sealed"]))
        assert "bo.lind@example.net" in (await engram.get(theirs.id, reveal=True)).content
        assert "helpdesk@example.org" in (await engram.get(shared.id, reveal=True)).content
