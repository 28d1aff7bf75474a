"""What every `engram` command shares: the consoles, the exit-code table, options, settings, and running a
coroutine with Engram's errors turned into a message and an exit code."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from engram import errors as e
from engram.config import Settings

if TYPE_CHECKING:
    from engram.service import Engram

T = TypeVar("T")

out = Console(soft_wrap=True)  # never wrap stdout: commands and URLs stay copyable, lines parseable
err = Console(stderr=True, soft_wrap=True)

EXIT_CODES: list[tuple[type[e.EngramError], int]] = [
    (e.ValidationError, 2),
    (e.PreconditionRequired, 2),
    (e.NotFoundError, 3),
    (e.ConflictError, 4),
    (e.AuthenticationError, 5),
    (e.PermissionDenied, 5),
    (e.PolicyRejection, 6),
    (e.Throttled, 9),
    (e.StoreUnavailable, 7),
    (e.MigrationError, 7),
    (e.VaultLocked, 7),
    (e.ConfigurationError, 7),
    (e.ProviderError, 8),
    (e.EngramError, 1),
]

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Embedded database directory (env ENGRAM_DATA_DIR).", show_default=False),
]
Tenant = Annotated[str, typer.Option("--tenant", "-t", help="Tenant id.")]
# Commands that may go through a server: the key given in ENGRAM_API_KEY names the tenant there.
OptionalTenant = Annotated[
    str | None,
    typer.Option(
        "--tenant", "-t", help="Tenant id (not needed with ENGRAM_API_KEY: the key names it).", show_default=False
    ),
]


def exit_code(exc: e.EngramError) -> int:
    return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


def settings_for(data_dir: Path | None, **overrides: Any) -> Settings:
    """Settings from the environment, with command-line options on top."""
    import pydantic

    values = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        values["data_dir"] = data_dir
    try:
        return Settings(**values)
    except pydantic.ValidationError as exc:
        from engram.model.validation import from_pydantic

        problem = from_pydantic(exc)
        err.print(f"[bold red]error[/]: invalid setting {problem.message}", highlight=False, markup=True)
        raise typer.Exit(2) from None


def settle_heap() -> int:
    """Once a long-running process has started (models loaded): collect, then move every object left to
    the collector's permanent generation, and return how many. A full collection then walks only what
    came since: beside a million-memory bench, one over the ~500,000 objects of start-up stalled a recall
    for 277 ms, 1.1 ms once they were frozen (docs/performance.md)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


async def ready(engram: Engram) -> None:
    """What a long-running process does once Engram is open: load the models now (the first write or
    action should not wait for them), then freeze what start-up left (``settle_heap``)."""
    await engram.warm()
    settle_heap()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine; turn Engram errors into a one-line message and the table's exit code."""
    try:
        return asyncio.run(coro)
    except e.EngramError as exc:
        where = f" (field: {exc.field})" if exc.field else ""
        err.print(f"[bold red]error[/]: {exc.message}{where}", highlight=False)
        raise typer.Exit(exit_code(exc)) from None


async def admin_call(settings: Settings, action: Callable[[Any], Awaitable[T]], *, create: bool = False) -> T:
    """Run ``action(engram)`` on an Engram opened without an embedder (administration needs none); only
    ``create`` makes a database in an embedded data directory that holds none."""
    from engram.service import Engram

    async with await Engram.open(settings, embedding=False, create=create) as engram:
        return await action(engram)
