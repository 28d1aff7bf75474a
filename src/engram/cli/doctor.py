"""`engram doctor`: is everything Engram needs in place? One line per part, and the fix for each one that is not."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from engram.cli.common import DataDir, out, run, settings_for

MARKS = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[bold red]fail[/]", "skip": "[dim]skip[/]"}


def doctor(
    url: Annotated[
        str | None,
        typer.Option("--url", help="The server to look for (env ENGRAM_URL; default: the configured host:port)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Check the database (reachable, PostgreSQL 14+, pgvector 0.8+, pg_trgm, migrations, a login held to
    row-level security), the embedder, Redis, the vault's keys and a running server; print the fix for each
    problem. Exits 1 when a check fails. Changes nothing."""
    import os

    from engram.service.doctor import diagnose

    checks = run(diagnose(settings_for(data_dir), server_url=url or os.environ.get("ENGRAM_URL")))
    failed = any(c.status == "fail" for c in checks)
    if as_json:
        print(json.dumps({"ok": not failed, "checks": [c.as_dict() for c in checks]}, indent=2))
    else:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("check", "", "detail", "fix"):
            table.add_column(column, overflow="fold")
        for c in checks:
            table.add_row(c.name, MARKS[c.status], _plain(c.detail), _plain(c.fix or ""))
        out.print(table)
    if failed:
        raise typer.Exit(1)


def _plain(text: str) -> str:
    from rich.markup import escape

    return escape(text)
