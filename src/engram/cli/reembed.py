"""`engram reembed`: move every memory to another embedding model, with a progress bar; resumable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from engram.cli.common import DataDir, err, out, run, settings_for
from engram.config import Settings

if TYPE_CHECKING:
    from engram.model.reembed import ReembedStatus


def reembed(
    model: Annotated[
        str | None,
        typer.Option("--model", help="The new model: local, hashing[:DIMS] or openai:MODEL[:DIMS]."),
    ] = None,
    status: Annotated[bool, typer.Option("--status", help="Print where the migration stands, change nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    batch: Annotated[int, typer.Option(help="Memories embedded per step (1-2048).", min=1, max=2048)] = 64,
    data_dir: DataDir = None,
) -> None:
    """Embedding model migration (SPEC 6.6): embed every memory with the new model beside the old vectors,
    switch reads when all have one, then drop the old vectors. Killed, it resumes where it was when run again;
    recall keeps working throughout."""
    if not status and model is None:
        raise typer.BadParameter("give --model (or --status)", param_hint="--model")
    result = run(_reembed(settings_for(data_dir), model, status=status, batch=batch, quiet=as_json))
    if as_json:
        out.print_json(result.model_dump_json())
        return
    out.print(
        f"{result.state}: {result.from_model} -> {result.to_model or '-'}; {result.queued} queued, "
        f"{result.embedded} embedded now, {result.dropped_vectors} old vectors dropped",
        highlight=False, markup=False,
    )  # fmt: skip


async def _reembed(settings: Settings, spec: str | None, *, status: bool, batch: int, quiet: bool) -> ReembedStatus:
    from engram.service import Engram

    async with await Engram.open(settings, create=False) as engram:
        if status or spec is None:
            return await engram.reembed_status()
        with Progress(TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      console=err, disable=quiet or not err.is_terminal) as bar:  # fmt: skip
            task = bar.add_task("embedding", total=None)

            def show(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return await engram.reembed(spec, batch=batch, progress=show)
