"""The outbox's worker (SPEC 7): lease due actions across tenants, carry each out through its handler,
record what came of it as an episodic memory, and settle it: done, retried later with exponential backoff,
or dead-lettered after its last attempt or a refusal.

Dispatch is effectively once: a lease keeps other workers off an action while one carries it out; a worker
that dies mid-dispatch loses its lease when it runs out and another sends the action again, with the same
idempotency key, which the receiver uses to apply it once. Workers sleep on LISTEN engram_outbox and wake
when an action is written, or when the next retry falls due.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import uuid
from typing import TYPE_CHECKING, Any

import psycopg

from engram.errors import EngramError
from engram.model.access import Principal
from engram.outbox.handlers import Dispatch, Outcome
from engram.store import outbox as store
from engram.workers.loop import Loop

if TYPE_CHECKING:
    from engram.service.engram import Engram

_log = logging.getLogger(__name__)


class Dispatcher(Loop):
    task_name = "engram-outbox"

    def __init__(
        self,
        engram: Engram,
        *,
        worker_id: str | None = None,
        batch: int = 16,
        lease_seconds: float = 60.0,
        poll: float = 5.0,
        backoff_base: float = 2.0,
        backoff_max: float = 600.0,
    ) -> None:
        self.engram = engram
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.batch = batch
        self.lease_seconds = lease_seconds
        self.poll = poll
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.dispatched = 0

    def backoff(self, attempts: int) -> float:
        """Seconds before attempt ``attempts + 1``: doubling from ``backoff_base``, at most ``backoff_max``,
        with a little jitter so that retries of many actions spread out."""
        delay = min(self.backoff_max, self.backoff_base * 2.0 ** max(0, attempts - 1))
        return float(delay * random.uniform(0.8, 1.2))  # noqa: S311 (jitter, not a secret)

    async def run_once(self) -> int:
        """Lease up to ``batch`` due actions and carry them out (concurrently). Returns how many."""
        async with self.engram.db.queue() as conn:
            leased = await store.lease(conn, worker=self.worker_id, limit=self.batch, lease_seconds=self.lease_seconds)
        if leased:
            await asyncio.gather(*(self._one(tenant_id, action_id) for tenant_id, action_id in leased))
        return len(leased)

    async def _one(self, tenant_id: str, action_id: uuid.UUID) -> None:
        try:
            async with self.engram.db.tenant(tenant_id) as conn:
                row = await store.by_id(conn, tenant_id, action_id)
            if row is None or row["status"] != "pending" or row["leased_by"] != self.worker_id:
                return
            keep = asyncio.create_task(self._keep_lease(tenant_id, action_id))
            try:
                outcome = await self._dispatch(tenant_id, row)
                await self._settle(tenant_id, row, outcome)
            finally:
                keep.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await keep
            self.dispatched += 1
        except (EngramError, OSError, psycopg.Error) as exc:  # the lease runs out and another worker retries
            _log.warning("action %s of tenant %s: %s", action_id, tenant_id, exc)

    async def _keep_lease(self, tenant_id: str, action_id: uuid.UUID) -> None:
        """Renew the lease every third of its length while the action is carried out: only a worker that
        died loses it."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                async with self.engram.db.tenant(tenant_id) as conn:
                    await store.renew(conn, tenant_id, action_id, self.worker_id, self.lease_seconds)
            except (EngramError, OSError, psycopg.Error) as exc:
                _log.warning("action %s: lease not renewed: %s", action_id, exc)

    async def _dispatch(self, tenant_id: str, row: dict[str, Any]) -> Outcome:
        handler = self.engram.handlers.get(row["handler"])
        if handler is None:
            return Outcome(False, error=f"no handler {row['handler']!r} in worker {self.worker_id}")
        attempt = Dispatch(
            tenant_id=tenant_id, action_id=row["id"], idempotency_key=row["idempotency_key"], handler=row["handler"],
            url=row["target"], payload=row["payload"], attempt=row["attempts"],
        )  # fmt: skip
        try:
            return await handler.dispatch(attempt)
        except Exception as exc:  # a plug-in handler's bug must not stop the worker
            _log.exception("handler %s failed on action %s", row["handler"], row["id"])
            return Outcome(False, error=f"handler {row['handler']} raised {type(exc).__name__}: {exc}"[:500])

    async def _settle(self, tenant_id: str, row: dict[str, Any], outcome: Outcome) -> None:
        last = row["attempts"] >= row["max_attempts"]
        if not outcome.ok and outcome.retryable and not last:
            delay = outcome.retry_after if outcome.retry_after is not None else self.backoff(row["attempts"])
            async with self.engram.db.tenant(tenant_id) as conn:
                await store.settle(
                    conn, store.RETRY_LATER, tenant_id, row["id"], self.worker_id, delay=min(delay, self.backoff_max),
                    error=(outcome.error or "failed")[:2000], result=outcome.detail or None,
                )  # fmt: skip
            return
        memory = await self._record(tenant_id, row, outcome)
        stmt = store.DONE if outcome.ok else store.DEAD
        async with self.engram.db.tenant(tenant_id) as conn:
            settled = await store.settle(
                conn, stmt, tenant_id, row["id"], self.worker_id, memory=memory,
                error=None if outcome.ok else (outcome.error or "failed")[:2000], result=outcome.detail or None,
            )  # fmt: skip
        if settled is None:
            _log.warning("action %s: the lease ran out before it was settled; another worker sends it again", row["id"])

    async def _record(self, tenant_id: str, row: dict[str, Any], outcome: Outcome) -> uuid.UUID | None:
        """What came of the action, as an episodic memory of its user, agent and workflow (written once per
        action: its external id is the action's)."""
        target = f" to {row['target']}" if row["target"] else ""
        if outcome.ok:
            status = outcome.detail.get("status_code")
            text = f"Action {row['idempotency_key']} ({row['handler']}{target}) was carried out" + (
                f": the receiver answered {status}." if status else "."
            )
        else:
            text = (
                f"Action {row['idempotency_key']} ({row['handler']}{target}) failed after {row['attempts']} "
                f"attempt{'s' if row['attempts'] != 1 else ''} and was not carried out: {outcome.error or 'failed'}"
            )
        visibility = "user" if row["user_id"] else "workflow" if row["workflow_id"] else "tenant"
        item = {
            "content": text, "kind": "episodic", "subtype": "action_outcome", "visibility": visibility,
            "user_id": row["user_id"], "agent_id": row["agent_id"], "workflow_id": row["workflow_id"],
            "external_id": f"outbox:{row['id']}", "source": {"type": "system_event", "ref": f"action:{row['id']}"},
            "tags": ["outbox", "done" if outcome.ok else "dead"],
            "metadata": {"action_id": str(row["id"]), "idempotency_key": row["idempotency_key"],
                         "status": "done" if outcome.ok else "dead"},
        }  # fmt: skip
        try:
            written = await self.engram.remember(item, principal=Principal.local(tenant_id, "outbox"))
        except EngramError as exc:  # refused by the tenant's admission policy, say: the action still settles
            _log.warning("action %s: its outcome was not remembered: %s", row["id"], exc)
            return None
        return written.id

    # --- the loop ------------------------------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            try:
                async with self.engram.db.direct() as listener:
                    await listener.execute("LISTEN engram_outbox")
                    while True:
                        if await self.run_once() >= self.batch:
                            continue  # more may be due
                        async with self.engram.db.queue() as conn:
                            due = await store.next_due(conn)
                        wait = self.poll if due is None else min(self.poll, max(0.05, due))
                        async for _ in listener.notifies(timeout=wait, stop_after=1):
                            pass
            except asyncio.CancelledError:
                raise
            except (EngramError, OSError, psycopg.Error) as exc:
                _log.warning("outbox worker: %s; retrying in %.0f s", exc, self.poll)
                await asyncio.sleep(self.poll)
