"""The README's Python example runs as written (against a test database, with the hashing embedder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import service_url
from tests.live_server import live_server

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(database_url: str) -> None:
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S) if "engram.client" not in b]
    assert blocks, "the README has no python example"
    env = {
        **os.environ, "DATABASE_URL": service_url(database_url), "ENGRAM_OWNER_DATABASE_URL": database_url,
        "ENGRAM_EMBEDDER": "hashing",
    }  # fmt: skip
    for code in blocks:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "superseded -> True" in done.stdout
        assert "['created', 'superseded']" in done.stdout
        assert "Invoices go out in USD" in done.stdout


def test_readme_and_client_doc_examples_run_against_a_server(database_url: str, tmp_path: Path) -> None:
    """The client examples (README, docs/client.md, docs/migrating.md) against a real `engram serve`, as ENGRAM_URL and
    ENGRAM_API_KEY tell them."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S) if "engram.client" in b]
    client_docs = [(README.parent / "docs" / name).read_text() for name in ("client.md", "migrating.md")]
    docs = [code for text in client_docs for code in re.findall(r"```python\n(.*?)```", text, re.S)]
    printed = [out for text in client_docs for out in re.findall(r"It prints:\n\n```\n(.*?)```", text, re.S)]
    assert len(blocks) == 1 and docs and len(printed) == len(docs)
    with live_server(database_url, tmp_path) as server:
        env = {**server.env, "ENGRAM_URL": server.url, "ENGRAM_API_KEY": server.key("acme")}
        done = subprocess.run([sys.executable, "-c", blocks[0]], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["Invoices go out in USD", "which currency are invoices in?"]
        for code, expected in zip(docs, printed, strict=True):
            env["ENGRAM_API_KEY"] = server.key(f"docs-{len(expected)}-{len(code)}", role="reviewer")
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            assert done.stdout == expected


LIFECYCLE = README.parent / "docs" / "lifecycle.md"


def test_lifecycle_doc_example_prints_what_it_says(database_url: str) -> None:
    text = LIFECYCLE.read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)
    printed = re.search(r"It prints:\n\n```\n(.*?)```", text, re.S)
    assert len(code) == 1 and printed
    env = {
        **os.environ, "DATABASE_URL": service_url(database_url), "ENGRAM_OWNER_DATABASE_URL": database_url,
        "ENGRAM_EMBEDDER": "hashing",
    }  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code[0]], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed.group(1)
