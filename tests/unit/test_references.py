"""The generated references (docs/reference/) are what the code makes now, and name every route and command:
a new route or option without a regenerated reference fails here."""

from __future__ import annotations

from pathlib import Path

from engram.api import create_app
from engram.api.reference import render as rest
from engram.cli.reference import render as cli
from tests.unit.test_docs import leaf_commands

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
REGENERATE = "regenerate: python -m engram.api.reference > docs/reference/rest.md; " \
             "python -m engram.cli.reference > docs/reference/cli.md"  # fmt: skip


def test_the_rest_reference_is_generated_from_the_current_schema() -> None:
    spec = create_app(None, run_worker=False).openapi()
    text = (REFERENCE / "rest.md").read_text()
    assert text == rest(spec), REGENERATE
    for path, ops in spec["paths"].items():
        for method in ops:
            assert f"### `{method.upper()} {path}`" in text


def test_the_cli_reference_is_generated_from_the_current_commands() -> None:
    text = (REFERENCE / "cli.md").read_text()
    assert text == cli(), REGENERATE
    for path, command in leaf_commands():
        assert f"## `{path}`" in text
        for param in command.params:
            if param.param_type_name == "option":
                assert f"`{param.opts[0]}`" in text, (path, param.opts)
