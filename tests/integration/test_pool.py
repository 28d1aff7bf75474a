"""The pool hands out the connection returned last: a light load stays on few, warm connections."""

from __future__ import annotations

from engram import Engram
from engram.store.database import Conn, Database


async def _backend(conn: Conn) -> int:
    row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
    assert row is not None
    return int(row["pid"])


async def _pid(db: Database) -> int:
    async with db.app() as conn:
        return await _backend(conn)


async def test_the_connection_returned_last_is_handed_out_first(engram: Engram) -> None:
    db = Database(engram.db.conninfo, min_size=3, max_size=3)
    await db.open()
    try:
        async with db.app() as first, db.app() as second:  # ``second`` goes back first, ``first`` last
            pids = [await _backend(first), await _backend(second)]
        assert await _pid(db) == pids[0]
        # One request at a time runs on one connection, however many the pool holds.
        assert {await _pid(db) for _ in range(6)} == {pids[0]}
        async with db.app() as again, db.app() as other:  # the two used last, most recent first
            got = [await _backend(again), await _backend(other)]
        assert got == [pids[0], pids[1]]
    finally:
        await db.close()


async def test_a_connection_that_ran_a_warm_key_is_handed_out_for_it(engram: Engram) -> None:
    db = Database(engram.db.conninfo, min_size=3, max_size=3)
    await db.open()
    try:
        # Marked on the connection the read ran on, which goes back first: the one idle longest.
        async with db.app() as first, db.app() as second, db.reads("t", warm=("owner", "t", "u:1")) as conn:
            warm = await _backend(conn)
            others = {await _backend(first), await _backend(second)}
        assert warm not in others
        assert await _pid(db) != warm  # unnamed, the connection returned last
        async with db.reads("t", warm=("owner", "t", "u:1")) as conn:
            assert await _backend(conn) == warm
        async with db.reads("t", warm=("owner", "t", "u:2")) as conn:  # never ran: the one returned last
            assert await _backend(conn) == warm
        async with db.reads("t", warm=("owner", "t", "u:2")) as conn:  # now marked on ``warm`` too
            assert await _backend(conn) == warm
        # A busy warm connection is not waited for: another idle one is handed out.
        async with db.reads("t", warm=("owner", "t", "u:1")) as busy, db.reads("t", warm=("owner", "t", "u:1")) as conn:
            assert await _backend(conn) != await _backend(busy)
    finally:
        await db.close()
