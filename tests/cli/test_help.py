"""Every command and sub-command of `engram` documents itself in --help.

Commands are enumerated from the Typer app itself, so a new command without a docstring fails here."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer
from typer.models import CommandInfo, DefaultPlaceholder
from typer.testing import CliRunner

from engram.cli.main import app
from tests.cli.conftest import flat

EXPECTED = {
    ("serve",),
    ("migrate",),
    ("remember",),
    ("get",),
    ("keys",),
    ("keys", "create"),
    ("keys", "list"),
    ("keys", "revoke"),
    ("bench",),
    ("bench", "write"),
}


def _command_name(info: CommandInfo) -> str:
    assert info.callback is not None
    return info.name or info.callback.__name__.replace("_", "-")


def _command_help(info: CommandInfo) -> str:
    assert info.callback is not None
    return info.help or inspect.getdoc(info.callback) or ""


def _group_help(group: typer.Typer) -> str:
    help_text = group.info.help
    return "" if isinstance(help_text, DefaultPlaceholder) or help_text is None else help_text


def _walk(typer_app: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(path, help text) for every command and group registered on the app, depth first."""
    found = [((*prefix, _command_name(c)), _command_help(c)) for c in typer_app.registered_commands]
    for g in typer_app.registered_groups:
        assert g.typer_instance is not None and g.name, f"group without a name under {prefix}"
        path = (*prefix, g.name)
        found.append((path, _group_help(g.typer_instance)))
        found += _walk(g.typer_instance, path)
    return found


COMMANDS = _walk(app)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def test_enumeration_finds_every_known_command() -> None:
    paths = {path for path, _ in COMMANDS}
    assert paths >= EXPECTED, f"commands missing from the app: {sorted(EXPECTED - paths)}"


def test_enumeration_matches_the_click_command_tree() -> None:
    """What Typer registered is exactly what the built command line exposes."""

    def tree(cmd: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
        out: set[tuple[str, ...]] = set()
        for name, sub in getattr(cmd, "commands", {}).items():  # Typer vendors click: duck-type groups
            out.add((*prefix, name))
            out |= tree(sub, (*prefix, name))
        return out

    assert tree(typer.main.get_command(app)) == {path for path, _ in COMMANDS}


@pytest.mark.parametrize(("path", "doc"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_shows_the_docstring(path: tuple[str, ...], doc: str) -> None:
    first = _first_line(doc)
    assert first, f"`engram {' '.join(path)}` has no help text (docstring or help=...)"
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert f"Usage: engram {' '.join(path)}" in flat(result.output)
    assert flat(first) in flat(result.output), result.output


def test_top_level_help_lists_every_command() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    for path, _ in COMMANDS:
        if len(path) == 1:
            assert f" {path[0]} " in flat(result.output), f"{path[0]} missing from engram --help"


def test_no_arguments_shows_help_not_a_traceback() -> None:
    result = CliRunner().invoke(app, [])
    assert "Usage: engram" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"engram {version('engram-memory')}", result.output
