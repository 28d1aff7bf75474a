"""Forgetting a subject (SPEC 6.5) on the real database: after it, no row of any table holds the user's id or
the text of their memories; other users keep theirs; the certificate's digest is in the tombstone."""

from __future__ import annotations

import httpx
import pytest

from engram import Engram
from engram.api import create_app
from engram.errors import PermissionDenied
from engram.model.forget import certificate_digest
from tests.receiver import receiver

SUBJECT = "subj-zq7x"
SECRET_WORDS = ["Zebulonia", "kiwifruitx", "Quarrington"]  # in the subject's texts and nowhere else


async def scan(engram: Engram, needles: list[str]) -> dict[str, int]:
    """Rows of every table in the schema (as text, RLS bypassed by the owner) holding any needle."""
    found: dict[str, int] = {}
    async with engram.db.owner() as conn:
        tables = await (
            await conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        ).fetchall()
        for t in tables:
            name = t["tablename"]
            for needle in needles:
                row = await (
                    await conn.execute(
                        f'SELECT count(*) AS n FROM "{name}" x WHERE strpos(lower(x::text), lower(%s)) > 0',
                        [needle],
                    )
                ).fetchone()
                if row and row["n"]:
                    found[f"{name}:{needle}"] = row["n"]
    return found


async def test_forget_leaves_no_row_holding_the_subject(engram: Engram) -> None:
    # The subject's memories, one updated (history), one tenant-wide (in another user's receipt), a person
    # name (the vault), one derived summary (another user's), relations, receipts, a workflow, an action, a key.
    a = await engram.remember("Zebulonia keeps a kiwifruitx allergy card in her wallet", user_id=SUBJECT)
    b = await engram.remember("Met Mr Quarrington about the Zebulonia shipping contract", user_id=SUBJECT,
                              visibility="tenant")  # fmt: skip
    await engram.update(a.id, {"importance": 0.9}, expected_revision=1)
    other = await engram.remember("Team lunch moves to Thursday", user_id="other-user")
    derived = await engram.remember("Summary: the Zebulonia account has allergy notes", user_id="other-user")
    await engram.relate({"src_id": str(derived.id), "dst_id": str(a.id), "type": "derived_from"})
    await engram.relate({"src_id": str(other.id), "dst_id": str(b.id), "type": "related"})
    await engram.recall("kiwifruitx allergy", user_id=SUBJECT)
    await engram.recall("shipping contract", user_id="other-user")  # sees b (tenant-wide)
    await engram.put_workflow_state("wf-subj", {"goal": "Renew Zebulonia's card"})
    await engram.put_workflow_state("wf-subj-2", {"goal": "Ship Zebulonia's order", "user_id": SUBJECT})
    with receiver() as hook:
        await engram.act({"idempotency_key": "zeb-1", "url": hook.url, "payload": {"who": "Zebulonia"},
                          "user_id": SUBJECT, "memory": {"content": "Zebulonia asked for a kiwifruitx refund",
                                                         "user_id": SUBJECT}})  # fmt: skip
    await engram.create_key({"role": "agent", "name": "bot", "user_id": SUBJECT})
    await engram.retriever.receipts.settle()
    before = await scan(engram, [SUBJECT, *SECRET_WORDS])
    assert {k.split(":")[0] for k in before} >= {
        "memories",
        "memory_revisions",
        "recall_receipts",
        "workflow_states",
        "outbox_actions",
        "api_keys",
    }, before
    assert "audit_events" in {k.split(":")[0] for k in await scan(engram, [str(a.id)])}

    cert = await engram.forget_subject(SUBJECT)
    assert set(cert.memories) >= {a.id, b.id, derived.id} and other.id not in cert.memories
    assert cert.removed["memories"] == len(cert.memories) == 4  # a, b, the action's memory, the derived one
    assert cert.removed["recall_receipts"] == 2 and cert.removed["api_keys"] == 1
    assert cert.removed["workflow_states"] == 1 and cert.removed["outbox_actions"] == 1
    assert cert.removed["memory_embeddings"] >= 4 and cert.removed["search_postings"] > 0
    assert cert.removed["pii_vault"] >= 1  # the person name only the subject's memory held

    # The "wf-subj" workflow had no user: its goal is not the subject's data by the tenant's own records.
    needles = [SUBJECT, *SECRET_WORDS, *(str(m) for m in cert.memories)]
    leftovers = {k: n for k, n in (await scan(engram, needles)).items()
                 if not k.startswith("workflow_state")}  # fmt: skip
    assert leftovers == {}
    assert (await engram.get(other.id)).content == "Team lunch moves to Thursday"
    async with engram.db.owner() as conn:
        tomb = await (
            await conn.execute("SELECT details FROM audit_events WHERE id = %s", [cert.tombstone_id])
        ).fetchone()
    assert tomb is not None and tomb["details"]["digest"] == cert.digest
    assert certificate_digest(cert.tenant_id, cert.subject, cert.removed, cert.memories) == cert.digest
    again = await engram.forget_subject(SUBJECT)  # idempotent: nothing more to remove
    assert again.memories == [] and sum(again.removed.values()) == 0


async def test_forget_over_rest_needs_an_unbound_admin(engram: Engram) -> None:
    await engram.remember("Zebulonia likes window seats", user_id=SUBJECT)
    app = create_app(engram, run_worker=False)
    keys = {
        role: (await engram.create_key({"role": role, "name": role, **binding})).key
        for role, binding in (("reviewer", {}), ("admin", {}))
    }
    bound_admin = (await engram.create_key({"role": "admin", "name": "bound", "user_id": SUBJECT})).key
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://engram.test") as client:
        url = f"/v1/subjects/{SUBJECT}:forget"
        denied = await client.post(url, headers={"Authorization": f"Bearer {keys['reviewer']}"})
        assert denied.status_code == 403 and denied.json()["error"]["required_role"] == "admin"
        assert (await client.post(url, headers={"Authorization": f"Bearer {bound_admin}"})).status_code == 403
        done = await client.post(url, headers={"Authorization": f"Bearer {keys['admin']}"})
        assert done.status_code == 200 and done.json()["removed"]["memories"] == 1
        assert done.json()["subject"] == f"user:{SUBJECT}" and len(done.json()["digest"]) == 64
        bad = await client.post("/v1/subjects/%20x%20:forget", headers={"Authorization": f"Bearer {keys['admin']}"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "user_id"
    with pytest.raises(PermissionDenied):
        from engram.model.access import Principal

        await engram.forget_subject(SUBJECT, principal=Principal(tenant_id="acme", role="reviewer"))


async def test_deleting_one_memory_leaves_only_its_tombstone(engram: Engram) -> None:
    """DELETE of one memory: its text and id leave every table (vectors, postings, history, relations, receipts
    that copied it, the summaries derived from it, the vault value only it held), but for the tombstone."""
    await engram.update_admission_policy({"approval": "off"})  # in service at once, so that recall uses it
    gone = await engram.remember("Zebulonia keeps a kiwifruitx allergy card; ask Mr Quarrington", user_id="u1")
    kept = await engram.remember("Team lunch moves to Thursday", user_id="u1")
    summary = await engram.remember("Summary: kiwifruitx allergy noted for the account", user_id="u1")
    await engram.relate({"src_id": str(summary.id), "dst_id": str(gone.id), "type": "derived_from"})
    await engram.relate({"src_id": str(kept.id), "dst_id": str(gone.id), "type": "related"})
    await engram.update(gone.id, {"importance": 0.9}, expected_revision=1)
    used = await engram.recall("kiwifruitx allergy card", user_id="u1")
    assert gone.id in [i.id for i in used.items]
    await engram.remember("Team lunch moves to Friday", user_id="u2")
    unrelated = await engram.recall("team lunch", user_id="u2")  # cannot see the memory: its receipt stays
    await engram.retriever.receipts.settle()
    needles = [*SECRET_WORDS, str(gone.id), str(summary.id)]
    assert {k.split(":")[0] for k in await scan(engram, needles)} >= {"memories", "memory_revisions", "recall_receipts"}

    cert = await engram.delete(gone.id)
    assert cert.subject == f"memory:{gone.id}" and set(cert.memories) == {gone.id, summary.id}
    assert cert.removed["memories"] == 2 and cert.removed["memory_revisions"] >= 3
    assert cert.removed["relations"] == 2 and cert.removed["recall_receipts"] >= 1
    assert cert.removed["memory_embeddings"] == 2 and cert.removed["search_postings"] > 0
    assert cert.removed["pii_vault"] >= 1  # the person name only this memory held
    assert certificate_digest(cert.tenant_id, cert.subject, cert.removed, cert.memories) == cert.digest
    leftovers = await scan(engram, needles)
    async with engram.db.owner() as conn:
        tomb = await (await conn.execute("SELECT * FROM audit_events WHERE id = %s", [cert.tombstone_id])).fetchone()
    assert tomb is not None and tomb["action"] == "memory.deleted" and tomb["details"]["digest"] == cert.digest
    assert leftovers == {f"audit_events:{gone.id}": 1}, leftovers  # the tombstone, which holds no content
    assert not any(w.lower() in str(tomb).lower() for w in SECRET_WORDS)
    assert (await engram.get(kept.id)).content == "Team lunch moves to Thursday"
    assert (await engram.receipt(unrelated.receipt_id)).id == unrelated.receipt_id  # other receipts stay
