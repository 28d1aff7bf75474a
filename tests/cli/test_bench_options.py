"""`engram bench` refuses options it cannot measure, naming the option and what it takes, before it opens
or builds anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.bench.facts import MAX_FACTS
from engram.cli.main import app


@pytest.mark.parametrize(
    ("args", "option", "allowed"),
    [
        (["recall", "--shape", "users", "--memories", "-5"], "--memories", "greater than or equal to 10"),
        (["recall", "--shape", "one-scope", "--memories", str(MAX_FACTS + 1)], "--memories", f"at most {MAX_FACTS:,}"),
        (["recall", "--memories", "500", "--tenants", "100"], "--memories", "at least 10 per tenant"),
        (["recall", "--tenants", "1"], "--tenants", "greater than or equal to 2"),
        (["recall", "--big-share", "1"], "--big-share", "between 0 and 1"),
        (["recall", "--big-share", "0"], "--big-share", "between 0 and 1"),
        (["recall", "--shape", "users", "--queries", "0"], "--queries", "greater than or equal to 1"),
        (["recall", "--shape", "everyone"], "--shape", "tenants, users, one-scope"),
        (["scale", "--queries", "0"], "--queries", "greater than or equal to 1"),
        (["scale", "--passes", "0"], "--passes", "greater than or equal to 1"),
        (["scale", "--sizes", "10,abc"], "--sizes", "whole numbers"),
        (["scale", "--sizes", f"10,{MAX_FACTS + 1}"], "--sizes", f"from 10 to {MAX_FACTS:,}"),
        (["scale", "--shapes", "users,tenants"], "--shapes", "users, one-scope"),
    ],
)
def test_bench_refuses_what_it_cannot_measure(args: list[str], option: str, allowed: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", *args, "--data-dir", str(tmp_path / "never")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.replace("│", " ").split())
    assert option in message and allowed in message, message
    assert not (tmp_path / "never").exists()  # refused before anything was built


def test_bench_scale_defaults_are_the_benchs_own() -> None:
    # The CLI states its defaults for --help; they must be what run_scale_bench takes when called directly.
    import typer.main

    from engram.bench import scale

    bench_scale = typer.main.get_command(app).commands["bench"].commands["scale"]  # type: ignore[attr-defined]
    defaults = {p.name: p.default for p in bench_scale.params}
    assert defaults["passes"] == scale.PASSES == 9
    assert defaults["sizes"] == ",".join(str(n) for n in scale.SIZES)
