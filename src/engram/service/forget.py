"""Forgetting a subject (SPEC 6.5): one transaction removes a user's memories and everything derived from
or recording them, leaves a tombstone without content, and answers with a deletion certificate."""

from __future__ import annotations

from datetime import UTC, datetime

from engram.model.access import Action, Principal
from engram.model.forget import DeletionCertificate, certificate_digest
from engram.model.ids import check_scope_id, new_id
from engram.service.core import Core
from engram.store import forget as store
from engram.store import vault

# Forgetting a large user reads and removes many rows: it may take longer than a request's statements.
FORGET_TIMEOUT = {"statement_timeout": "300s"}


class Forgetting(Core):
    async def forget_subject(
        self,
        user_id: str,
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> DeletionCertificate:
        """Remove everything the tenant holds of user ``user_id`` (admin, with a key bound to nobody): their
        memories with vectors, postings, history and relations; memories derived from them; receipts of their
        queries and of recalls that used their memories; the audit events of those memories and those naming
        the user; their workflow state, actions and bound keys; vault values only they referenced; this
        process's caches of the tenant. An audit tombstone without content records the certificate's digest."""
        who = self._who(tenant, principal, actor)
        who.require(Action.FORGET)
        user_id = check_scope_id(user_id, "user_id")
        tenant_id = who.tenant_id
        removed: dict[str, int] = {}
        buffer = getattr(self, "buffer", None)  # the conversation buffer, Redis or PostgreSQL: turns not yet condensed
        if buffer is not None:
            removed["buffered_turns"] = await buffer.forget_user(tenant_id, user_id)
        async with self.db.tenant(tenant_id, FORGET_TIMEOUT) as conn:
            rows = await store.subject_memories(conn, tenant_id, user_id)
            ids = [r["id"] for r in rows]
            removed.update(await store.count_cascaded(conn, tenant_id, ids))
            # Their own vault key: their sealed copies, here and in every backup, open no more.
            subject_key = self.subject_keys.key_id(tenant_id, user_id)
            removed["pii_vault_subjects"] = await vault.drop_copies(conn, tenant_id, subject_key)
            removed["subject_keys"] = int(self.subject_keys.destroy(tenant_id, user_id))
            removed["pii_vault"] = await store.remove_orphaned_values(conn, tenant_id, ids, rows)
            params = {"tenant_id": tenant_id, "user_id": user_id, "ids": ids, "texts": [str(i) for i in ids]}
            for table in store.REMOVALS:
                removed[table] = await store.remove(conn, table, params)
            subject = f"user:{user_id}"
            digest = certificate_digest(tenant_id, subject, removed, ids)
            tombstone = new_id()
            await store.tombstone(conn, tenant_id, who.actor, tombstone, {"removed": removed, "digest": digest})
        caches = self._forget_caches(tenant_id, user_id)
        return DeletionCertificate(
            tenant_id=tenant_id, subject=subject, removed=removed, memories=ids, caches_cleared=caches,
            completed_at=datetime.now(UTC), tombstone_id=tombstone, digest=digest,
        )  # fmt: skip

    def _forget_caches(self, tenant_id: str, user_id: str) -> list[str]:
        """This process's copies: query vectors (keyed by query text), corpus statistics and scope sizes, and
        the principals of keys bound to the user."""
        self.retriever.vectors.forget(tenant_id)
        self.retriever.forget_corpus(tenant_id)
        self.key_cache.drop(lambda p: p.tenant_id == tenant_id and p.user_id == user_id)
        return ["query_vectors", "corpus_statistics", "scope_sizes", "api_key_principals"]
