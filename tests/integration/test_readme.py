"""The README's Python example runs as written (against a test database, with the hashing embedder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import service_url

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(database_url: str) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
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
