"""EngramSync: the same service, blocking, for scripts and notebooks."""

from __future__ import annotations

from engram import EngramSync, HashingEmbedder
from tests.conftest import settings_for


def test_the_blocking_facade_writes_recalls_and_administers(database_url: str) -> None:
    with EngramSync(settings_for(database_url), embedder=HashingEmbedder(), tenant="acme") as memory:
        w = memory.remember("The staging database is reset every Sunday", visibility="tenant")
        result = memory.recall("when is staging reset?")
        assert [i.id for i in result.items] == [w.id]
        assert memory.receipt(result.receipt_id).selected[0]["id"] == str(w.id)
        memory.archive(w.id)
        assert memory.unarchive(w.id).status == "active"
        made = memory.create_key({"role": "agent", "user_id": "u1"})
        assert [k.id for k in memory.list_keys()] == [made.id]
        assert memory.revoke_key(made.id).revoked_at is not None
