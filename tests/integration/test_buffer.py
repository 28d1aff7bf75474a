"""The conversation buffer (SPEC 6.2) on the real Redis (127.0.0.1:6379) and the real PostgreSQL: one
interface, both backends; turns condensed every N into memories derived from their (archived) turns; an
unreachable Redis refuses the turn loudly; forgetting a user empties their buffered turns."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from engram import Engram
from engram.errors import StoreUnavailable
from engram.lifecycle.buffer import PostgresBuffer, RedisBuffer

REDIS = "redis://127.0.0.1:6379/0"  # started on these machines and in CI: unreachable is a failure

CHAT = [
    ("user", "Hi there!"),
    ("assistant", "Hello! How can I help?"),
    ("user", "I prefer invoices in EUR from now on, not USD."),
    ("assistant", "Noted, invoices will go out in EUR."),
    ("user", "Thanks!"),
    ("user", "The export to Xero failed twice yesterday with a timeout."),
    ("assistant", "Sorry about that. I'll retry the Xero export tonight."),
    ("user", "Ok."),
    ("user", "We decided to move the weekly report to Mondays."),
    ("assistant", "Great, Mondays it is."),
]


@pytest.fixture(params=["redis", "postgresql"])
async def buffered(request: pytest.FixtureRequest, engram: Engram) -> AsyncIterator[Engram]:
    if request.param == "redis":
        engram.buffer = RedisBuffer(REDIS, prefix=f"engram-test-{uuid.uuid4().hex[:8]}")
    else:
        engram.buffer = PostgresBuffer(engram.db)
    yield engram


async def test_turns_are_condensed_every_n_into_derived_memories(buffered: Engram) -> None:
    engram = buffered
    acks = [await engram.add_turn("s1", {"speaker": who, "content": text, "user_id": "u1"}) for who, text in CHAT]
    assert [a.buffered for a in acks[:9]] == list(range(1, 10)) and all(not a.condensed for a in acks[:9])
    last = acks[-1]
    assert last.turns_condensed == 10 and last.buffered == 0 and last.storage == engram.buffer.kind
    assert 0 < last.memory_chars < 0.75 * last.raw_chars  # the filler went
    by_id = {m.id: (await engram.get(m.id, user_id="u1")).content for m in last.condensed}
    written = set(by_id.values())
    assert "user: I prefer invoices in EUR from now on, not USD." in written, written
    assert any("Xero failed twice" in c for c in written) and any("weekly report to Mondays" in c for c in written)
    assert not any(c.endswith(("Thanks!", "Ok.", "How can I help?", "Mondays it is.")) for c in written)
    assert await engram.buffered_turns("s1") == []
    # Each summary derives from its turn, kept archived (out of recall, with its history).
    summary = next(m for m in last.condensed if by_id[m.id].startswith("user: I prefer invoices"))
    async with engram.db.tenant("acme") as conn:
        rel = await (
            await conn.execute(
                "SELECT m.status, m.content FROM relations r JOIN memories m ON m.tenant_id = r.tenant_id"
                " AND m.id = r.dst_id WHERE r.src_id = %s AND r.type = 'derived_from'",
                [summary.id],
            )
        ).fetchall()
    assert [(r["status"], r["content"]) for r in rel] == [("archived", CHAT[2][0] + ": " + CHAT[2][1])]
    recalled = await engram.recall("which currency for invoices?", user_id="u1")
    assert recalled.items and recalled.items[0].id == summary.id
    # The eleventh turn starts the next batch.
    more = await engram.add_turn("s1", {"content": "Remind me on Friday.", "user_id": "u1"})
    assert more.buffered == 1 and [t.content for t in await engram.buffered_turns("s1")] == ["Remind me on Friday."]


async def test_forget_empties_the_users_buffered_turns(buffered: Engram) -> None:
    engram = buffered
    await engram.add_turn("s2", {"content": "My locker code is Zebulonx 4471", "user_id": "gone"})
    await engram.add_turn("s2", {"content": "Someone else's turn", "user_id": "stays"})
    cert = await engram.forget_subject("gone")
    assert cert.removed["buffered_turns"] == 1
    assert [t.user_id for t in await engram.buffered_turns("s2")] == ["stays"]
    if isinstance(engram.buffer, RedisBuffer):
        for key in await engram.buffer.keys("acme"):
            assert "gone" not in key
            items = await engram.buffer._redis.lrange(key, 0, -1) if key.split(":")[1] == "buf" else []
            assert not any("Zebulonx" in i for i in items)


async def test_an_unreachable_redis_refuses_the_turn(engram: Engram) -> None:
    engram.buffer = RedisBuffer("redis://127.0.0.1:1/0")
    with pytest.raises(StoreUnavailable, match="nothing was stored"):
        await engram.add_turn("s3", {"content": "I prefer tea"})
    engram.buffer = PostgresBuffer(engram.db)
    assert await engram.buffered_turns("s3") == []


async def test_bad_turns_name_the_field(engram: Engram) -> None:
    from engram.errors import ValidationError

    for bad, field in (({"content": ""}, "content"), ({"content": "x", "speaker": ""}, "speaker"),
                       ({"content": "x", "mood": "happy"}, "mood")):  # fmt: skip
        with pytest.raises(ValidationError) as err:
            await engram.add_turn("s4", bad)
        assert err.value.field == field
    with pytest.raises(ValidationError) as err:
        await engram.add_turn(" padded ", {"content": "x"})
    assert err.value.field == "session_id"
