"""docs/reference/cli.md, generated from the commands themselves: every command, argument and option with its
help and default. ``python -m engram.cli.reference > docs/reference/cli.md`` writes it; a test fails when the
committed file is not what this makes. docs/cli.md is the guide; this is the complete list."""

from __future__ import annotations

from typing import Any


def render() -> str:
    import typer.main

    from engram.cli.main import app

    root = typer.main.get_command(app)
    lines = [
        "# CLI reference",
        "",
        "Generated from the commands (`python -m engram.cli.reference > docs/reference/cli.md`); do not edit by",
        "hand. [cli.md](../cli.md) explains each command with examples and the environment it reads.",
        "",
    ]
    for path, command in _leaves(root, "engram"):
        lines += _command(path, command)
    return "\n".join(lines).rstrip() + "\n"


def _leaves(command: Any, path: str) -> list[tuple[str, Any]]:
    if hasattr(command, "commands"):
        found: list[tuple[str, Any]] = []
        for name in sorted(command.commands):
            found += _leaves(command.commands[name], f"{path} {name}")
        return found
    return [(path, command)]


def _command(path: str, command: Any) -> list[str]:
    out = [f"## `{path}`", "", " ".join((command.help or "").split()), ""]
    rows = []
    for param in command.params:
        if param.param_type_name == "argument":
            name = f"`{(param.name or '').upper()}`"
        else:
            name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        default = "" if param.required or param.default in (None, False, ()) else f"`{_default(param.default)}`"
        kind = "required" if param.required else (default or "")
        help_text = " ".join((getattr(param, "help", None) or "").split()).replace("|", "\\|")
        rows.append(f"| {name} | {kind} | {help_text} |")
    if rows:
        out += ["| Argument or option | Default | Meaning |", "|---|---|---|", *rows, ""]
    return out


def _default(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(getattr(value, "value", value))


if __name__ == "__main__":
    print(render(), end="")
