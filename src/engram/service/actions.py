"""Actions and the outbox (SPEC 7): an action and the memory that implies it are written in one
transaction, under the caller's idempotency key; workers (``outbox.dispatcher``) carry it out."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from engram.errors import ConflictError, EngramError, IdempotencyConflict, NotFoundError, ValidationError
from engram.model import WriteResult, new_id
from engram.model.access import Action as Can
from engram.model.access import Principal
from engram.model.action import ACTION_STATUSES, Action, ActionInput, ActionPage, ActionResult
from engram.model.ids import parse_uuid
from engram.model.validation import parse
from engram.outbox.handlers import Handler, Webhook, builtin
from engram.outbox.targets import Targets
from engram.service.reads import Reads
from engram.service.writes import EmbedMode, remember_many
from engram.store import memories as q
from engram.store import outbox as store
from engram.store.database import Conn


class _KeyTaken(ConflictError):
    """Another request wrote this idempotency key between our look and our write (the write is undone)."""


class Actions(Reads):
    @property
    def handlers(self) -> dict[str, Handler]:
        """The handlers actions may name: the built-in webhook and those added with ``add_handler``."""
        if not hasattr(self, "_handlers"):
            allowed = self._settings.webhook_allowed_hosts if self._settings is not None else None
            self._handlers: dict[str, Handler] = builtin(Targets.parse(allowed))
        return self._handlers

    def add_handler(self, handler: Handler) -> None:
        """Let actions name ``handler.name`` (in the processes that write and that dispatch them)."""
        self.handlers[handler.name] = handler

    async def act(
        self,
        action: ActionInput | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
        embed: EmbedMode = "sync",
    ) -> ActionResult:
        """Write an action (and its memory, if given) in one transaction. The same idempotency key with the
        same request answers with what was written (``replayed``); with another request, IdempotencyConflict."""
        who = self._who(tenant, principal, actor)
        who.require(Can.WRITE)
        given = parse(ActionInput, action)
        if given.handler not in self.handlers:
            known = ", ".join(sorted(self.handlers))
            raise ValidationError(f"handler {given.handler!r} is not registered here; known: {known}", field="handler")
        if given.handler == "webhook" and given.url is None:
            raise ValidationError("a webhook action needs a url (http:// or https://)", field="url")
        hook = self.handlers[given.handler]
        if given.url is not None and isinstance(hook, Webhook):
            await hook.targets.check_on_write(given.url)
        user_id = who.bound(given.user_id, "user_id")
        agent_id = who.bound(given.agent_id, "agent_id")
        digest = given.request_hash()
        replay = await self._replay(who, given, digest)
        if replay is not None:
            return replay
        params = {
            "id": new_id(), "key": given.idempotency_key, "hash": digest, "handler": given.handler,
            "target": given.url, "payload": given.payload, "user_id": user_id, "agent_id": agent_id,
            "workflow_id": given.workflow_id, "max_attempts": given.max_attempts, "memory_id": None,
        }  # fmt: skip
        written: dict[str, Any] = {}

        async def write_action(conn: Conn, outcomes: list[q.Outcome]) -> None:
            if outcomes and outcomes[0].error is not None:
                return  # the memory failed: the transaction is undone, the action not written
            memory_id = outcomes[0].id if outcomes else None
            row = await store.insert(conn, who.tenant_id, {**params, "memory_id": memory_id})
            if row is None:
                raise _KeyTaken(f"idempotency_key {given.idempotency_key!r} was written meanwhile")
            written["row"] = row

        memory: WriteResult | None = None
        try:
            if given.memory is not None:
                result = (await remember_many(self, who, [given.memory], embed, batch=False, after=write_action))[0]
                if isinstance(result, EngramError):
                    raise result
                memory = result
            else:
                async with self.db.tenant(who.tenant_id) as conn:
                    await write_action(conn, [])
        except _KeyTaken:
            replay = await self._replay(who, given, digest)
            assert replay is not None
            return replay
        except EngramError as exc:
            if exc.field and not exc.field.startswith("memory") and given.memory is not None and _memory_field(exc):
                exc.field = f"memory.{exc.field}"
            raise
        return ActionResult(action=Action.from_row(written["row"]), memory=memory, replayed=False)

    async def _replay(self, who: Principal, given: ActionInput, digest: str) -> ActionResult | None:
        async with self.db.tenant(who.tenant_id) as conn:
            row = await store.by_key(conn, who.tenant_id, given.idempotency_key)
        if row is None:
            return None
        if row["request_hash"] != digest:
            raise IdempotencyConflict(
                f"idempotency_key {given.idempotency_key!r} was used for a different action ({row['id']}): use a new "
                "key for a new action, or send the same request to read what it did",
                existing_id=str(row["id"]),
                field="idempotency_key",
            )
        memory = None
        if row["memory_id"] is not None:
            mem = given.memory  # the same request: the memory was written as it says
            with_memory = await self.get(
                row["memory_id"], principal=who, user_id=who.bound(mem.user_id if mem else None, "user_id"),
                agent_id=who.bound(mem.agent_id if mem else None, "agent_id"),
                workflow_id=mem.workflow_id if mem else None,
            )  # fmt: skip
            memory = WriteResult(
                id=with_memory.id, revision=with_memory.revision, status=with_memory.status, replayed=True,
                reasons=[], memory=with_memory, embedded=True, admission=with_memory.admission,
            )  # fmt: skip
        return ActionResult(action=Action.from_row(row), memory=memory, replayed=True)

    async def action(
        self, action_id: uuid.UUID | str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> Action:
        """An action and how far it got."""
        who = self._who(tenant, principal)
        who.require(Can.READ)
        aid = parse_uuid(action_id, field="action_id", what="action id")
        async with self.db.tenant(who.tenant_id) as conn:
            row = await store.by_id(conn, who.tenant_id, aid)
        if row is None or not _reachable(who, row):
            raise NotFoundError(f"action {aid} does not exist in this tenant", field="action_id")
        return Action.from_row(row)

    async def actions(
        self,
        *,
        status: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> ActionPage:
        """The tenant's actions, newest first (``status="dead"``: the dead letters)."""
        who = self._who(tenant, principal)
        who.require(Can.READ)
        if status is not None and status not in ACTION_STATUSES:
            raise ValidationError(f"status must be one of {', '.join(ACTION_STATUSES)}", field="status")
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        before = parse_uuid(cursor, field="cursor", what="cursor") if cursor else None
        async with self.db.tenant(who.tenant_id) as conn:
            rows = await store.page(conn, who.tenant_id, status=status, before=before, limit=limit + 1)
        items = [Action.from_row(r) for r in rows[:limit] if _reachable(who, r)]
        return ActionPage(items=items, next_cursor=str(rows[limit - 1]["id"]) if len(rows) > limit else None)

    async def retry_action(
        self, action_id: uuid.UUID | str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> Action:
        """Send a dead action again, its attempts counted afresh (reviewer or admin)."""
        who = self._who(tenant, principal)
        who.require(Can.APPROVE)
        aid = parse_uuid(action_id, field="action_id", what="action id")
        async with self.db.tenant(who.tenant_id) as conn:
            row = await store.revive(conn, who.tenant_id, aid)
            current = row or await store.by_id(conn, who.tenant_id, aid)
        if current is None:
            raise NotFoundError(f"action {aid} does not exist in this tenant", field="action_id")
        if row is None:
            raise ConflictError(f"action {aid} is {current['status']}, not dead: only a dead action is sent again")
        return Action.from_row(row)


def _reachable(who: Principal, row: Mapping[str, Any]) -> bool:
    """A key bound to a user or agent sees only the actions written for that user or agent."""
    if who.user_id is not None and row["user_id"] != who.user_id:
        return False
    return who.agent_id is None or row["agent_id"] == who.agent_id


def _memory_field(exc: EngramError) -> bool:
    return exc.field not in ("idempotency_key", "handler", "url", "payload", "max_attempts", "tenant")
