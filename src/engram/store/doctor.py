"""What `engram doctor` asks PostgreSQL: its version, the extensions Engram needs, and the login's rights."""

from __future__ import annotations

from typing import Any

from engram.store.database import Conn

SERVER_FACTS = """
SELECT current_setting('server_version_num')::int AS version_num,
       current_setting('server_version') AS version,
       (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
       (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS vector_available,
       (SELECT extversion FROM pg_extension WHERE extname = 'pg_trgm') AS pg_trgm,
       (SELECT default_version FROM pg_available_extensions WHERE name = 'pg_trgm') AS pg_trgm_available
"""


async def server_facts(conn: Conn) -> dict[str, Any]:
    """The server's version and the installed (and available) versions of pgvector and pg_trgm."""
    row = await (await conn.execute(SERVER_FACTS)).fetchone()
    assert row is not None  # a SELECT without FROM always returns its row
    return dict(row)
