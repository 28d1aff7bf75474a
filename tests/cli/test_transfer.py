"""`engram import`, `engram export`, `engram list` and `engram completion` as real processes on the embedded
PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli.conftest import ENGRAM, cli_env, run_cli


def test_export_then_import_into_another_tenant_is_resumable(data_dir: Path, workdir: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    lines = [
        {"content": "Invoices for Acme go out in EUR", "kind": "semantic", "fact_key": "invoice.currency",
         "confidence": 0.9, "user_id": "u1", "tags": ["billing"]},
        {"content": "The deploy window is Tuesday 14:00 UTC", "external_id": "ops-1", "metadata": {"team": "ops"}},
        "not an object",
        {"content": "x", "kind": "feelings"},
    ]  # fmt: skip
    source.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n{broken json\n")
    first = run_cli("import", source, "--tenant", "acme", "--json", "--data-dir", data_dir, cwd=workdir)
    assert first.returncode == 2, first.stdout + first.stderr
    assert json.loads(first.stdout) == {"created": 2, "replayed": 0, "failed": 3}
    assert "line 3:" in first.stderr and "line 4:" in first.stderr and "kind" in first.stderr
    assert "line 6: not JSON" in first.stderr
    again = run_cli("import", source, "--tenant", "acme", "--json", "--data-dir", data_dir, cwd=workdir)
    assert json.loads(again.stdout) == {"created": 0, "replayed": 2, "failed": 3}, "a re-run must not duplicate"

    exported = tmp_path / "out.jsonl"
    r = run_cli("export", "--tenant", "acme", "-o", exported, "--data-dir", data_dir, cwd=workdir)
    assert r.returncode == 0 and "exported 2 memories" in r.stderr, r.stderr
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    assert {row["content"] for row in rows} == {lines[0]["content"], lines[1]["content"]}  # type: ignore[index]
    by_key = {row.get("fact_key"): row for row in rows}
    assert by_key["invoice.currency"]["tags"] == ["billing"] and by_key["invoice.currency"]["user_id"] == "u1"
    assert by_key[None]["external_id"] == "ops-1" and by_key[None]["metadata"] == {"team": "ops"}
    assert not {"id", "status", "revision", "recorded_at"} & set(by_key[None])

    into = run_cli("import", exported, "--tenant", "globex", "--json", "--data-dir", data_dir, cwd=workdir)
    assert json.loads(into.stdout) == {"created": 2, "replayed": 0, "failed": 0}, into.stderr
    listed = run_cli("list", "--tenant", "globex", "--json", "--data-dir", data_dir, cwd=workdir)
    page = json.loads(listed.stdout)
    assert len(page["items"]) == 2 and {m["tenant_id"] for m in page["items"]} == {"globex"}
    table = run_cli("list", "--tenant", "globex", "--kind", "semantic", "--data-dir", data_dir, cwd=workdir)
    assert table.returncode == 0 and "Invoices for Acme go out in EUR" in table.stdout
    assert "deploy window" not in table.stdout


def test_import_reads_standard_input_and_export_writes_standard_output(data_dir: Path, workdir: Path) -> None:
    body = "\n".join(json.dumps({"content": f"Runbook step {n}: restart the [bold]worker[/bold]"}) for n in range(5))
    r = subprocess.run(
        [str(ENGRAM), "import", "-", "--tenant", "acme", "--data-dir", str(data_dir)],
        input=body, capture_output=True, text=True, cwd=workdir, env=cli_env(), timeout=60, check=False,
    )  # fmt: skip
    assert r.returncode == 0 and "5 created, 0 already there, 0 failed" in r.stdout, r.stdout + r.stderr
    out = run_cli("export", "--tenant", "acme", "--data-dir", data_dir, cwd=workdir)
    assert len(out.stdout.splitlines()) == 5 and all(json.loads(x)["external_id"] for x in out.stdout.splitlines())
    listed = run_cli("list", "--tenant", "acme", "--limit", "2", "--data-dir", data_dir, cwd=workdir)
    assert "[bold]worker[/bold]" in listed.stdout, "user content is printed as text, not rich markup"
    assert "more: --cursor" in listed.stdout


def test_completion_scripts_complete_commands_and_options(workdir: Path) -> None:
    script = run_cli("completion", "bash", cwd=workdir)
    assert script.returncode == 0 and "_ENGRAM_COMPLETE=complete_bash" in script.stdout
    env = {**cli_env(), "_ENGRAM_COMPLETE": "complete_bash", "COMP_WORDS": "engram rec", "COMP_CWORD": "1"}
    done = subprocess.run([str(ENGRAM)], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.split() == ["recall"], done.stdout + done.stderr
    env.update(COMP_WORDS="engram import --ba", COMP_CWORD="2")
    done = subprocess.run([str(ENGRAM)], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.split() == ["--batch"]
    assert os.path.basename(str(ENGRAM)) == "engram"
    bad = run_cli("completion", "tcsh", cwd=workdir)
    assert bad.returncode == 2 and "tcsh" in bad.stderr
