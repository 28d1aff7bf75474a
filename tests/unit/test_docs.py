"""The reference documents in docs/ against the code they describe: a drifting doc fails the build."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from pydantic import AliasChoices

from engram import errors
from engram.api.errors import STATUS, error_body
from engram.cli.common import EXIT_CODES
from engram.cli.main import app
from engram.config import Settings

DOCS = Path(__file__).resolve().parents[2] / "docs"


def read(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def table(text: str, first_header: str) -> list[dict[str, str]]:
    """The rows of the markdown table whose header row starts with ``| <first_header> |``, as dicts with
    backticks stripped from the cells."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if _cells(line)[:1] == [first_header]), None)
    assert start is not None, f"no table with the header {first_header!r}"
    header = _cells(lines[start])
    rows = []
    for line in lines[start + 2 :]:  # skip the |---| line
        if not line.startswith("|"):
            break
        cells = _cells(line)
        assert len(cells) == len(header), f"row has {len(cells)} cells, header {len(header)}: {line}"
        rows.append(dict(zip(header, cells, strict=True)))
    assert rows, f"the table {first_header!r} is empty"
    return rows


def _cells(line: str) -> list[str]:
    if not line.startswith("|"):
        return []
    return [c.strip().replace("`", "") for c in line.strip().strip("|").split("|")]


def headings(text: str) -> list[str]:
    """Markdown headings, without the #s and backticks."""
    return [line.lstrip("#").strip().replace("`", "") for line in text.splitlines() if re.match(r"#{1,6} ", line)]


def section(text: str, heading: str) -> str:
    """The text under a heading up to the next heading."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if re.match(r"#{1,6} ", line):
            if inside:
                break
            inside = line.lstrip("#").strip().replace("`", "") == heading
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


# --- docs/errors.md ------------------------------------------------------------------------------------


def error_classes() -> list[type[errors.EngramError]]:
    classes = [getattr(errors, name) for name in errors.__all__]
    return [c for c in classes if isinstance(c, type) and issubclass(c, errors.EngramError)]


def first_match(rows: list[tuple[type[errors.EngramError], int]], cls: type[errors.EngramError]) -> int:
    """What the ordered isinstance table gives an instance of ``cls``."""
    return next(code for klass, code in rows if issubclass(cls, klass))


def test_every_error_class_is_documented() -> None:
    doc = read("errors.md")
    classes = error_classes()
    assert len(classes) == 19
    documented = {row["Class"] for row in table(doc, "Class")}
    for cls in classes:
        assert cls.__name__ in doc
        assert cls.__name__ in documented, f"{cls.__name__} has no row in the status table of docs/errors.md"
        assert cls.__name__ in headings(doc), f"docs/errors.md does not say when {cls.__name__} is raised"
    assert documented == {c.__name__ for c in classes}


@pytest.mark.parametrize("row", table(read("errors.md"), "Class"), ids=lambda r: r["Class"])
def test_error_table_matches_the_code(row: dict[str, str]) -> None:
    cls = getattr(errors, row["Class"])
    assert row["Parent"] == cls.__bases__[0].__name__
    assert row["Code"] == cls.code
    assert int(row["HTTP status"]) == first_match(STATUS, cls), f"HTTP status of {cls.__name__}"
    assert int(row["CLI exit"]) == first_match(EXIT_CODES, cls), f"exit code of {cls.__name__}"


def test_error_tables_cover_every_class() -> None:
    # Both tables end with EngramError, so every class has a status and an exit code; the doc's rows
    # therefore describe real behaviour, not a gap in a table.
    assert STATUS[-1][0] is errors.EngramError
    assert EXIT_CODES[-1][0] is errors.EngramError


def test_error_body_keys_are_documented() -> None:
    samples: list[errors.EngramError] = [
        errors.ValidationError("bad", field="content", details=[{"field": "content", "message": "x", "type": "t"}]),
        errors.RevisionConflict("stale", current_revision=3),
        errors.IdempotencyConflict("used", existing_id="0190"),
        errors.PolicyRejection("no", reasons=["chat_filler"], admission={"decision": "reject", "reasons": []}),
        errors.NotFoundError("gone", field="id"),
        errors.NotCurrent("superseded", current_id="0191"),
        errors.PermissionDenied("agents may not", required_role="reviewer"),
    ]
    keys = {key for exc in samples for key in error_body(exc)}
    assert {"code", "message", "field", "details", "current_revision", "existing_id"} <= keys
    documented = {row["Key"] for row in table(read("errors.md"), "Key")}
    assert keys == documented
    assert '{"error": {"code"' in read("errors.md")


# --- docs/cli.md ---------------------------------------------------------------------------------------


def command_paths(t: typer.Typer, prefix: tuple[str, ...] = ("engram",)) -> list[tuple[str, ...]]:
    """Every command and group registered in the Typer app, recursively, as name paths."""
    paths: list[tuple[str, ...]] = []
    for cmd in t.registered_commands:
        assert cmd.callback is not None
        paths.append((*prefix, cmd.name or cmd.callback.__name__.replace("_", "-")))
    for group in t.registered_groups:
        assert group.typer_instance is not None
        name = group.name or group.typer_instance.info.name
        assert isinstance(name, str), f"unnamed group under {prefix}"
        paths.append((*prefix, name))
        paths += command_paths(group.typer_instance, (*prefix, name))
    return paths


def test_the_app_has_the_expected_commands() -> None:
    names = {" ".join(p) for p in command_paths(app)}
    assert {"engram serve", "engram migrate", "engram keys create", "engram keys list", "engram keys revoke"} <= names
    assert {"engram remember", "engram get", "engram bench write"} <= names


@pytest.mark.parametrize("path", [" ".join(p) for p in command_paths(app)])
def test_every_command_has_a_heading(path: str) -> None:
    assert path in headings(read("cli.md")), f"docs/cli.md has no heading for `{path}`"


def leaf_commands() -> list[tuple[str, Any]]:
    """(path, command) for every runnable command. Typer vendors its own click, so this goes by duck type."""
    root = typer.main.get_command(app)
    out: list[tuple[str, Any]] = []

    def walk(cmd: Any, path: str) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, f"{path} {name}")
        else:
            out.append((path, cmd))

    walk(root, "engram")
    return out


@pytest.mark.parametrize("path,command", leaf_commands(), ids=[p for p, _ in leaf_commands()])
def test_every_option_and_argument_is_documented(path: str, command: Any) -> None:
    text = section(read("cli.md"), path)
    assert text, f"no section for {path}"
    assert command.params
    for param in command.params:
        if param.param_type_name == "option":
            for opt in param.opts:
                assert re.search(rf"`{re.escape(opt)}\b", text), f"{path}: option {opt} is not documented"
        else:
            assert param.param_type_name == "argument"
            assert param.name is not None
            assert f"`{param.name.upper()}`" in text, f"{path}: argument {param.name.upper()} is not documented"


def env_names(name: str, field: Any) -> list[str]:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(c) for c in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return [f"{Settings.model_config.get('env_prefix', '')}{name}".upper()]


def test_cli_doc_names_every_environment_variable() -> None:
    doc = read("cli.md")
    for name, field in Settings.model_fields.items():
        for env in env_names(name, field):
            assert f"`{env}`" in doc, f"docs/cli.md does not mention {env}"


# --- docs/configuration.md -----------------------------------------------------------------------------


def rendered_default(field: Any) -> str | None:
    """How the doc writes a field's default; None when it is computed (default_factory)."""
    if field.default_factory is not None:
        return None
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def config_rows() -> dict[str, dict[str, str]]:
    return {row["Setting"]: row for row in table(read("configuration.md"), "Setting")}


def test_every_setting_is_documented() -> None:
    rows = config_rows()
    assert set(rows) == set(Settings.model_fields), "docs/configuration.md and Settings list different settings"
    doc = read("configuration.md")
    for name in Settings.model_fields:
        assert f"`{name}`" in doc


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_setting_row_matches_the_code(name: str) -> None:
    field = Settings.model_fields[name]
    row = config_rows()[name]
    for env in env_names(name, field):
        assert env in re.findall(r"[A-Z_]+", row["Environment variable"]), f"{name}: {env} missing"
    default = rendered_default(field)
    if default is not None:
        assert row["Default"] == default, f"{name}: the doc says {row['Default']!r}, the code {default!r}"
    assert row["Meaning"], f"{name} has no explanation"


def test_environment_variables_really_set_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The names the docs give are the names Settings reads (no I/O: no .env file, no database)."""
    values = {
        "ENGRAM_PORT": ("port", 9001),
        "ENGRAM_EMBEDDER": ("embedder", "hashing"),
        "ENGRAM_EMBEDDING_SEND_DIMENSIONS": ("embedding_send_dimensions", True),
        "ENGRAM_ENRICHMENT_INTERVAL": ("enrichment_interval", 2.5),
    }
    for env, (_, value) in values.items():
        monkeypatch.setenv(env, str(value).lower() if isinstance(value, bool) else str(value))
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@db/engram")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    for field, value in values.values():
        assert getattr(settings, field) == value
    assert settings.database_url is not None
    assert settings.database_url.get_secret_value() == "postgresql://u:p@db/engram"


def test_retrieval_doc_shows_the_trust_priors_and_a_packet_as_built() -> None:
    import uuid
    from datetime import UTC, datetime

    from engram.model.memory import Source
    from engram.model.recall import RecallItem
    from engram.model.tenant import DEFAULT_SOURCE_TRUST
    from engram.retrieval import packet as pk
    from engram.retrieval.tokens import default_counter

    text = read("retrieval.md")
    documented = {}
    for row in table(text, "source type"):
        for name in row["source type"].split(","):
            documented[name.strip()] = float(row["trust"])
    assert documented == DEFAULT_SOURCE_TRUST

    shown = text.split("marks memories as untrusted evidence, never instructions:\n\n```\n", 1)[1].split("```")[0]

    def item(content: str, source: str, day: datetime, confidence: float, conflicts: list[uuid.UUID]) -> RecallItem:
        return RecallItem(
            id=uuid.uuid4(), content=content, summary=None, kind="semantic", source=Source(type=source),  # type: ignore[arg-type]
            recorded_at=day, valid_from=day, confidence=confidence, importance=0.5, score=1.0, ranks={}, signals={},
            reasons=[], conflicts_with=conflicts,
        )  # fmt: skip

    paid = item(
        "Invoice INV-77 was paid in full on 2026-11-02", "tool_result", datetime(2026, 11, 2, tzinfo=UTC), 1.0, []
    )
    items = [
        paid,
        item("Invoice INV-77 is probably still unpaid", "agent_inference", datetime(2026, 11, 5, tzinfo=UTC), 0.76, []),
        item("Invoice INV-77 is open", "user_message", datetime(2024, 3, 5, tzinfo=UTC), 1.0, [paid.id]),
    ]
    packet = pk.build(items, max_items=5, max_tokens=500, count=default_counter())
    assert packet.text == shown
    assert "35 cl100k tokens" in text and default_counter()(pk.header(2026)) == 35
