"""The quick commands: `remember`, `get`, `list` and `recall`, through a running server when there is one
(``engram.cli.backend``), else in process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from engram.cli.backend import backend
from engram.cli.common import DataDir, OptionalTenant, out, run, settings_for
from engram.errors import EngramError

if TYPE_CHECKING:
    from engram.model.memory import MemoryPage
    from engram.model.recall import RecallResult

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def remember(
    content: Annotated[str, typer.Argument(help="The memory's text.")],
    tenant: OptionalTenant = None,
    kind: Annotated[str, typer.Option(help="working, episodic, semantic or procedural.")] = "episodic",
    fact_key: Annotated[str | None, typer.Option(help="Stable key; a new value supersedes the old.")] = None,
    user_id: Annotated[str | None, typer.Option(help="The user the memory is about or for.")] = None,
    agent_id: Annotated[str | None, typer.Option(help="The agent that owns it.")] = None,
    external_id: Annotated[str | None, typer.Option(help="Idempotency key.")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Repeatable.")] = None,
    confidence: Annotated[float | None, typer.Option(help="0 to 1: how sure the source is.")] = None,
    importance: Annotated[float | None, typer.Option(help="0 to 1: how much it matters.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Write one memory and print the write result as JSON."""
    fields: dict[str, Any] = {
        "content": content,
        "kind": kind,
        "fact_key": fact_key,
        "user_id": user_id,
        "agent_id": agent_id,
        "external_id": external_id,
        "tags": tag or [],
        "confidence": confidence,
        "importance": importance,
    }
    item = {k: v for k, v in fields.items() if v is not None}

    async def go() -> Any:
        async with backend(settings_for(data_dir), tenant, create=True) as target:
            (result,) = await target.remember_many([item])
        if isinstance(result, EngramError):
            raise result
        return result

    result = run(go())
    print(result.model_dump_json(indent=2, exclude={"memory"}))


def get(
    memory_id: Annotated[str, typer.Argument(help="The memory's id.")],
    tenant: OptionalTenant = None,
    reveal: Annotated[bool, typer.Option("--reveal", help="Personal data in place of its placeholders.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Print one memory as JSON."""

    async def go() -> Any:
        async with backend(settings_for(data_dir), tenant, embedding=False) as source:
            return await source.get(memory_id, reveal=reveal)

    print(run(go()).model_dump_json(indent=2))


def list_memories(
    tenant: OptionalTenant = None,
    kind: Annotated[str | None, typer.Option(help="Only this kind.")] = None,
    status: Annotated[str | None, typer.Option(help="Only this status (active, archived, pending, ...).")] = None,
    user_id: Annotated[str | None, typer.Option(help="Only this user's memories.")] = None,
    agent_id: Annotated[str | None, typer.Option(help="Only this agent's memories.")] = None,
    fact_key: Annotated[str | None, typer.Option(help="Only memories stating this fact key.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option(help="Only memories with this tag (repeatable: all must match).")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many (1-500).", min=1, max=500)] = 20,
    cursor: Annotated[str | None, typer.Option(help="Continue after a previous page (its next_cursor).")] = None,
    reveal: Annotated[bool, typer.Option("--reveal", help="Personal data in place of its placeholders.")] = False,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """List memories newest first, filtered; a table, or the page as JSON with --json."""
    filters = {"kind": kind, "status": status, "user_id": user_id, "agent_id": agent_id, "fact_key": fact_key}
    clean: dict[str, Any] = {k: v for k, v in filters.items() if v is not None}
    if tag:
        clean["tags"] = tag

    async def go() -> MemoryPage:
        async with backend(settings_for(data_dir), tenant, embedding=False) as source:
            return await source.list(limit=limit, cursor=cursor, reveal=reveal, filters=clean)

    page = run(go())
    if as_json:
        print(page.model_dump_json(indent=2))
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "kind", "status", "user", "content", "tags"):
        table.add_column(column, overflow="fold", no_wrap=column == "id")
    for m in page.items:
        table.add_row(str(m.id), m.kind, m.status, Text(m.user_id or ""), _short(m.content), Text(", ".join(m.tags)))
    _print_table(table)
    if page.next_cursor:
        out.print(f"more: --cursor {page.next_cursor}", highlight=False, markup=False)


def recall(
    query: Annotated[str, typer.Argument(help="What the agent is trying to do or answer.")],
    tenant: OptionalTenant = None,
    user_id: Annotated[str | None, typer.Option(help="Acting for this user.")] = None,
    max_items: Annotated[int, typer.Option(help="At most this many memories.")] = 10,
    max_tokens: Annotated[int, typer.Option(help="Token budget of the packet.")] = 2000,
    preset: Annotated[str, typer.Option(help="hybrid, dense or lexical.")] = "hybrid",
    packet: Annotated[bool, typer.Option("--packet", help="Print only the prompt packet.")] = False,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """Recall memories for a query: a table of the items and the receipt's id, the whole result as JSON with
    --json, or only the prompt packet with --packet."""
    request = {"query": query, "user_id": user_id, "max_items": max_items, "max_tokens": max_tokens, "preset": preset}

    async def go() -> RecallResult:
        async with backend(settings_for(data_dir), tenant) as source:
            return await source.recall({k: v for k, v in request.items() if v is not None})

    result = run(go())
    if packet:
        print(result.packet)
    elif as_json:
        print(result.model_dump_json(indent=2))
    else:
        table = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("#", "score", "kind", "content", "id"):
            table.add_column(
                column, overflow="fold", no_wrap=column == "id", justify="right" if column == "#" else "left"
            )
        for n, item in enumerate(result.items, start=1):
            table.add_row(str(n), f"{item.score:.3f}", item.kind, _short(item.content), str(item.id))
        _print_table(table)
        degraded = f", degraded: {result.degraded_reason}" if result.degraded else ""
        took = f"{result.packet_tokens} packet tokens, {result.latency_ms:.1f} ms{degraded}"
        out.print(
            f"receipt {result.receipt_id}  ({took})",
            highlight=False,
            markup=False,
        )


def _short(text: str, width: int = 100) -> Text:
    """User content as plain text (never rich markup), on one line, cut at ``width``."""
    flat = " ".join(text.split())
    return Text(flat if len(flat) <= width else flat[: width - 1] + "…")


def _print_table(table: Table) -> None:
    if table.row_count == 0:
        out.print("(nothing found)", highlight=False)
        return
    # Piped or redirected: no terminal width to fit, so rows stay whole (one memory, one line) for grep and cut.
    (out if out.is_terminal else Console(width=240)).print(table)
