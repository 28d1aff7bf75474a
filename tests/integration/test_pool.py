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
