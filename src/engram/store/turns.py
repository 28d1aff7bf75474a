"""The conversation buffer in PostgreSQL (migration 0018)."""

from __future__ import annotations

from typing import Any, LiteralString

from engram.store.database import Conn
from engram.store.keys import ENSURE_TENANT

APPEND: LiteralString = """
INSERT INTO session_turns (tenant_id, session_id, speaker, content, user_id, agent_id, at)
VALUES (%(tenant_id)s, %(session_id)s, %(speaker)s, %(content)s, %(user_id)s, %(agent_id)s, %(at)s)
"""
WAITING: LiteralString = "SELECT count(*) AS n FROM session_turns WHERE tenant_id = %s AND session_id = %s"
PEEK: LiteralString = """
SELECT seq, speaker, content, at, user_id, agent_id FROM session_turns
 WHERE tenant_id = %s AND session_id = %s ORDER BY seq LIMIT %s
"""
DROP: LiteralString = "DELETE FROM session_turns WHERE tenant_id = %s AND session_id = %s AND seq = ANY(%s)"
# One condensing per session at a time (released with the transaction that holds it).
TRY_LOCK: LiteralString = "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 42)) AS got"
FORGET_USER: LiteralString = "DELETE FROM session_turns WHERE tenant_id = %s AND user_id = %s RETURNING seq"


async def append(conn: Conn, tenant_id: str, session_id: str, turn: dict[str, Any]) -> int:
    await conn.execute(ENSURE_TENANT, [tenant_id])
    await conn.execute(APPEND, {**turn, "tenant_id": tenant_id, "session_id": session_id})
    row = await (await conn.execute(WAITING, [tenant_id, session_id])).fetchone()
    return int(row["n"]) if row else 0


async def peek(conn: Conn, tenant_id: str, session_id: str, n: int) -> list[dict[str, Any]]:
    return await (await conn.execute(PEEK, [tenant_id, session_id, n])).fetchall()


async def drop(conn: Conn, tenant_id: str, session_id: str, seqs: list[int]) -> None:
    await conn.execute(DROP, [tenant_id, session_id, seqs])


async def try_lock(conn: Conn, tenant_id: str, session_id: str) -> bool:
    row = await (await conn.execute(TRY_LOCK, [f"turns\x1f{tenant_id}\x1f{session_id}"])).fetchone()
    return bool(row and row["got"])


async def forget_user(conn: Conn, tenant_id: str, user_id: str) -> int:
    return len(await (await conn.execute(FORGET_USER, [tenant_id, user_id])).fetchall())
