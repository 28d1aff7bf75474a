"""`engram mcp`: the MCP server on stdio, for clients that start it as a subprocess (desktop assistants,
agent frameworks). Acts as the key in ENGRAM_API_KEY; stdout carries only the protocol."""

from __future__ import annotations

import os

from engram.cli.common import DataDir, err, ready, run, settings_for
from engram.config import Settings


def mcp(data_dir: DataDir = None) -> None:
    """Serve Engram's MCP tools (remember, recall, get, list, update, forget) and resources (a memory, a receipt)
    on stdin/stdout, as the API key in ENGRAM_API_KEY: its tenant, role and binding apply to every call.
    `engram serve` offers the same over streamable HTTP at /mcp."""
    import typer

    key = os.environ.get("ENGRAM_API_KEY", "").strip()
    if not key:
        err.print(
            "[bold red]error[/]: set ENGRAM_API_KEY to the key the MCP client acts as "
            "(`engram keys create --tenant T --role agent`)",
            highlight=False,
        )
        raise typer.Exit(5)
    run(_serve(settings_for(data_dir), key))


async def _serve(settings: Settings, key: str) -> None:
    from engram.mcp.server import build, keyed
    from engram.service import Engram

    async with await Engram.open(settings) as engram:
        await engram.authenticate(key)  # a wrong or revoked key fails here, before any client talks to us
        await ready(engram)
        server = build(lambda: engram, keyed(lambda: engram, key))
        await server.run_stdio_async()
