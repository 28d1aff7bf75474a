"""`engram import` and `engram export`: memories as JSON Lines, one memory per line, each line shaped as the body
of ``POST /v1/memories``. Both stream (memory use does not grow with the file) and show progress on stderr.

Import is resumable: every line is written with an external id (its own, or one derived from the line's
bytes), so a second run of the same file replays what is already there instead of writing it twice."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from engram.cli.backend import Backend, backend
from engram.cli.common import DataDir, OptionalTenant, err, out, run, settings_for
from engram.errors import EngramError

if TYPE_CHECKING:
    from engram.model import Memory

BATCH = 200
# What a line carries: the writable fields of a memory (MemoryInput), nothing the server assigns.
EXPORTED = (
    "content", "kind", "subtype", "visibility", "summary", "fact_key", "source", "confidence", "importance",
    "user_id", "agent_id", "workflow_id", "session_id", "external_id", "valid_from", "valid_until", "expires_at",
    "policy", "tags", "metadata",
)  # fmt: skip
MAX_REPORTED = 20  # failed lines printed one by one; the rest are counted


@dataclass
class Tally:
    created: int = 0
    replayed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"created": self.created, "replayed": self.replayed, "failed": self.failed}


def import_memories(
    file: Annotated[Path, typer.Argument(help="A JSON Lines file, or - for standard input.", allow_dash=True)],
    tenant: OptionalTenant = None,
    batch: Annotated[int, typer.Option(help="Memories per request (1-1000).", min=1, max=1000)] = BATCH,
    as_json: Annotated[bool, typer.Option("--json", help="Print the totals as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Write the memories of a JSON Lines file (one `POST /v1/memories` body per line), in batches, through the
    full write path (admission, deduplication, supersession). Resumable: lines without an external_id get one
    derived from their bytes, so running the same file again writes nothing twice. Exit code 2 when a line
    failed (each is reported with its line number)."""
    settings = settings_for(data_dir)
    tally = run(_import(settings, tenant, file, batch))
    if as_json:
        print(json.dumps(tally.as_dict()))
    else:
        out.print(f"{tally.created} created, {tally.replayed} already there, {tally.failed} failed", highlight=False)
    for line in tally.failures[:MAX_REPORTED]:
        err.print(line, highlight=False, markup=False)
    if tally.failed > MAX_REPORTED:
        err.print(f"... and {tally.failed - MAX_REPORTED} more failed lines", highlight=False)
    if tally.failed:
        raise typer.Exit(2)


async def _import(settings: Any, tenant: str | None, file: Path, batch: int) -> Tally:
    tally = Tally()
    stream, size = _open(file)
    with stream, _progress(size is not None) as progress:
        task = progress.add_task("importing", total=size)
        async with backend(settings, tenant, create=True) as target:
            pending: list[tuple[int, dict[str, Any]]] = []
            for number, raw in enumerate(stream, start=1):
                progress.advance(task, len(raw))
                item = _parse(number, raw, tally)
                if item is not None:
                    pending.append((number, item))
                if len(pending) >= batch:
                    await _write(target, pending, tally)
                    pending = []
            if pending:
                await _write(target, pending, tally)
    return tally


def _open(file: Path) -> tuple[IO[bytes], int | None]:
    if str(file) == "-":
        return sys.stdin.buffer, None
    try:
        return file.open("rb"), file.stat().st_size
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {file}: {exc.strerror}", param_hint="FILE") from None


def _parse(number: int, raw: bytes, tally: Tally) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        item = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        tally.failed += 1
        tally.failures.append(f"line {number}: not JSON ({exc})")
        return None
    if not isinstance(item, dict):
        tally.failed += 1
        tally.failures.append(f"line {number}: a memory is a JSON object, got {type(item).__name__}")
        return None
    if not item.get("external_id"):
        # The same line always gets the same id: a re-run (after a crash, say) replays instead of duplicating.
        item["external_id"] = "import:" + hashlib.sha256(raw.strip()).hexdigest()[:32]
    return item


async def _write(target: Backend, pending: list[tuple[int, dict[str, Any]]], tally: Tally) -> None:
    results = await target.remember_many([item for _, item in pending])
    for (number, _), result in zip(pending, results, strict=True):
        if isinstance(result, EngramError):
            tally.failed += 1
            where = f" (field: {result.field})" if result.field else ""
            tally.failures.append(f"line {number}: {result.code}: {result.message}{where}")
        elif result.replayed:
            tally.replayed += 1
        else:
            tally.created += 1


def export_memories(
    tenant: OptionalTenant = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write to this file (default: standard output).", allow_dash=True)
    ] = Path("-"),
    kind: Annotated[str | None, typer.Option(help="Only this kind.")] = None,
    status: Annotated[str, typer.Option(help="Only this status (active, archived, pending, ...).")] = "active",
    user_id: Annotated[str | None, typer.Option(help="Only this user's memories.")] = None,
    agent_id: Annotated[str | None, typer.Option(help="Only this agent's memories.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option(help="Only memories with this tag (repeatable: all must match).")
    ] = None,
    reveal: Annotated[bool, typer.Option("--reveal", help="Personal data in place of its placeholders.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Write the tenant's memories as JSON Lines, newest first, one `POST /v1/memories` body per line, so
    `engram import` takes the file back (into this or another tenant). A memory without an external id is
    exported with `engram:<id>` as one, so importing the same file twice writes it once."""
    settings = settings_for(data_dir)
    filters = {"kind": kind, "status": status, "user_id": user_id, "agent_id": agent_id, "tags": tag}
    clean = {k: v for k, v in filters.items() if v}
    to_file = str(output) != "-"
    sink: IO[str] = output.open("w", encoding="utf-8") if to_file else sys.stdout
    try:
        count = run(_export(settings, tenant, clean, reveal, sink))
    finally:
        if to_file:
            sink.close()
    err.print(f"exported {count} memories" + (f" to {output}" if to_file else ""), highlight=False)


async def _export(settings: Any, tenant: str | None, filters: dict[str, Any], reveal: bool, sink: IO[str]) -> int:
    count = 0
    with _progress(False) as progress:
        task = progress.add_task("exporting", total=None)
        async with backend(settings, tenant, embedding=False) as source:
            cursor: str | None = None
            while True:
                page = await source.list(limit=500, cursor=cursor, reveal=reveal, filters=dict(filters))
                for memory in page.items:
                    sink.write(json.dumps(line_of(memory), ensure_ascii=False) + "\n")
                count += len(page.items)
                progress.update(task, completed=count)
                if page.next_cursor is None:
                    return count
                cursor = page.next_cursor


def line_of(memory: Memory) -> dict[str, Any]:
    """A memory as the body that writes it again."""
    data = memory.model_dump(mode="json", include=set(EXPORTED), exclude_none=True)
    data.setdefault("external_id", f"engram:{memory.id}")
    return data


def _progress(sized: bool) -> Progress:
    columns: Iterator[Any] = iter(
        [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn()]
        if sized
        else [SpinnerColumn(), TextColumn("{task.description}: {task.completed:,.0f} memories"), TimeElapsedColumn()]
    )
    return Progress(*columns, console=err, transient=True)
