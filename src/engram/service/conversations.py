"""Conversation turns (SPEC 6.2): appended to the session's buffer; every ``buffer_turns`` turns the oldest
are condensed into candidate memories that pass the whole write path (admission included), each derived
from the turn it comes from; the raw turns are then archived or dropped, as the settings say."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

from engram.config import Settings
from engram.errors import EngramError, ProviderError
from engram.lifecycle.buffer import Buffer, PostgresBuffer, RedisBuffer
from engram.lifecycle.summarise import Condensed, ExtractiveSummariser, Summariser, Turn
from engram.model import WriteResult
from engram.model.access import Action, Principal
from engram.model.conversation import BufferedTurn, TurnAck, TurnInput
from engram.model.ids import check_scope_id
from engram.model.recall import RelationInput
from engram.model.validation import parse
from engram.service import changes
from engram.service.core import Core
from engram.service.writes import remember_many
from engram.store import memories as q
from engram.store import relations

_log = logging.getLogger(__name__)


class Conversations(Core):
    @property
    def buffer(self) -> Buffer:
        """Redis when ``REDIS_URL`` is set, else PostgreSQL (replaceable, as tests do with a key prefix)."""
        if getattr(self, "_buffer", None) is None:
            url = self._settings.redis_url if self._settings is not None else None
            self._buffer: Buffer | None = (
                RedisBuffer(url.get_secret_value()) if url is not None else PostgresBuffer(self.db)
            )
        assert self._buffer is not None
        return self._buffer

    @buffer.setter
    def buffer(self, value: Buffer) -> None:
        self._buffer = value

    @property
    def summariser(self) -> Summariser:
        """The chat endpoint's when ``ENGRAM_SUMMARISER=llm``, else the extractive one (replaceable)."""
        if getattr(self, "_summariser", None) is None:
            self._summariser: Summariser | None = build_summariser(self._settings)
        assert self._summariser is not None
        return self._summariser

    @summariser.setter
    def summariser(self, value: Summariser) -> None:
        self._summariser = value

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            if getattr(self, "_summariser", None) is not None:
                await self.summariser.aclose()

    async def add_turn(
        self,
        session_id: str,
        turn: TurnInput | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> TurnAck:
        """Append a turn to the session's buffer; when it holds ``buffer_turns`` turns, condense them."""
        who = self._who(tenant, principal, actor)
        who.require(Action.WRITE)
        session_id = check_scope_id(session_id, "session_id")
        given = parse(TurnInput, turn)
        buffered = BufferedTurn(
            seq=0, speaker=given.speaker, content=given.content, at=given.at or self.clock(),
            user_id=who.bound(given.user_id, "user_id"), agent_id=who.bound(given.agent_id, "agent_id"),
        )  # fmt: skip
        waiting = await self.buffer.append(who.tenant_id, session_id, buffered)
        every = self._settings.buffer_turns if self._settings is not None else 10
        ack = TurnAck(session_id=session_id, buffered=waiting, condensed=[], storage=self.buffer.kind)
        if waiting >= every:
            try:
                ack = await self._condense(who, session_id, every, ack)
            except EngramError as exc:  # the turn is stored: the next append condenses what waits
                _log.warning("condensing session %s of tenant %s failed: %s", session_id, who.tenant_id, exc)
        return ack

    async def buffered_turns(
        self, session_id: str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> list[BufferedTurn]:
        """The turns waiting in the session's buffer, oldest first (a bound key sees its user's only)."""
        who = self._who(tenant, principal)
        who.require(Action.READ)
        session_id = check_scope_id(session_id, "session_id")
        turns = await self.buffer.peek(who.tenant_id, session_id, 10_000)
        return [t for t in turns if who.user_id is None or t.user_id == who.user_id]

    async def _condense(self, who: Principal, session_id: str, every: int, ack: TurnAck) -> TurnAck:
        async with self.buffer.condensing(who.tenant_id, session_id) as mine:
            if not mine:
                return ack  # another request condenses this session now
            turns = await self.buffer.peek(who.tenant_id, session_id, every)
            archive = self._settings is None or self._settings.buffer_raw == "archive"
            raw = await self._keep_raw(who, session_id, turns) if archive else {}
            by_seq = {t.seq: t for t in turns}
            condensed, used = await self._summarise(turns)
            candidates: list[dict[str, Any]] = [
                {
                    "content": c.content, "kind": "episodic", "subtype": "summary", "session_id": session_id,
                    "user_id": by_seq[int(c.ref)].user_id, "agent_id": by_seq[int(c.ref)].agent_id,
                    "valid_from": by_seq[int(c.ref)].at.isoformat(),
                    "external_id": f"summary:{session_id}:{c.key or c.ref}",
                    "source": {"type": "agent_inference", "ref": f"turn:{session_id}:{c.ref}"},
                    "metadata": {"derived_from_turn": int(c.ref), "derived_from_turns": [int(r) for r in c.refs],
                                 "summariser": used},
                }
                for c in condensed
            ]  # fmt: skip
            written: list[WriteResult] = []
            kept_chars = 0
            links: list[RelationInput] = []
            results = await remember_many(self, who, candidates, "sync", batch=True)
            for cand, result in zip(candidates, results, strict=True):
                if isinstance(result, EngramError):
                    continue  # refused by the policy, like any write; its turn still leaves the buffer
                written.append(result)
                kept_chars += len(str(cand["content"]))
                for seq in cand["metadata"]["derived_from_turns"]:
                    turn_memory = raw.get(int(seq))
                    if turn_memory is not None:
                        links.append(RelationInput(src_id=result.id, dst_id=turn_memory, type="derived_from"))
            await self._link(who, links)
            await self.buffer.drop(who.tenant_id, session_id, [t.seq for t in turns])
        return ack.model_copy(
            update={
                "buffered": max(0, ack.buffered - len(turns)), "condensed": written, "turns_condensed": len(turns),
                "raw_chars": sum(len(f"{t.speaker}: {t.content}") for t in turns), "memory_chars": kept_chars,
                "summariser": used,
            }
        )  # fmt: skip

    async def _summarise(self, turns: list[BufferedTurn]) -> tuple[list[Condensed], str]:
        """The candidates of the turns, each user's and agent's turns condensed apart (a summary never mixes
        two people's words), and which summariser made them: when the configured one fails, the extractive
        one does the work, so condensing never waits on a model."""
        groups: dict[tuple[str | None, str | None], list[Turn]] = {}
        for t in turns:
            groups.setdefault((t.user_id, t.agent_id), []).append(Turn(str(t.seq), t.speaker, t.content))
        chosen = self.summariser
        try:
            return [c for group in groups.values() for c in await chosen.condense(group)], chosen.name
        except ProviderError as exc:
            if isinstance(chosen, ExtractiveSummariser):
                raise
            _log.warning("summariser %s failed, the extractive one condenses instead: %s", chosen.name, exc)
            fallback = ExtractiveSummariser()
            return [c for group in groups.values() for c in await fallback.condense(group)], fallback.name

    async def _keep_raw(self, who: Principal, session_id: str, turns: list[BufferedTurn]) -> dict[int, uuid.UUID]:
        """The turns as archived memories (their history and links stay, recall never sees them): seq -> id."""
        items = [
            {
                "content": f"{t.speaker}: {t.content}", "kind": "episodic", "session_id": session_id,
                "user_id": t.user_id, "agent_id": t.agent_id, "valid_from": t.at.isoformat(),
                "external_id": f"turn:{session_id}:{t.seq}", "source": {"type": "user_message"},
                "metadata": {"speaker": t.speaker, "turn": t.seq},
            }
            for t in turns
        ]  # fmt: skip
        kept: dict[int, uuid.UUID] = {}
        results = await remember_many(self, who, items, "sync", batch=True)
        for turn, result in zip(turns, results, strict=True):
            if isinstance(result, EngramError):
                continue
            if result.status == "active":
                acting = who.acting(user_id=turn.user_id, agent_id=turn.agent_id)
                await changes.archive(self, who, acting, result.id, None)
            kept[turn.seq] = result.id
        return kept

    async def _link(self, who: Principal, links: list[RelationInput]) -> None:
        """Each summary ``derived_from`` its turn (both written just now by this request, in this tenant)."""
        if not links:
            return
        async with self.db.tenant(who.tenant_id) as conn:
            for link in links:
                await relations.upsert(conn, who.tenant_id, link)
            events = [("relation.upserted", r.src_id, {"dst_id": str(r.dst_id), "type": r.type}) for r in links]
            await q.write_audit(conn, who.tenant_id, who.actor, events)


def build_summariser(settings: Settings | None) -> Summariser:
    if settings is None or settings.summariser == "extractive":
        return ExtractiveSummariser()
    from engram.lifecycle.llm_summarise import ChatSummariser
    from engram.providers.chat import endpoint_from

    return ChatSummariser(endpoint_from(settings, "ENGRAM_SUMMARISER"))
