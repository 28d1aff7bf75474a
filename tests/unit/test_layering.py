"""One way in: the layers import only downwards. ``model`` is pure (it imports nothing of Engram but
``errors``); ``store`` knows nothing of the service or its surfaces; the surfaces (REST, CLI) reach the
database only through ``Engram``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "engram"


def engram_imports(package: str) -> dict[str, set[str]]:
    """For each module of the package, the ``engram.*`` modules it imports (at any depth of the file)."""
    found: dict[str, set[str]] = {}
    for path in sorted((SRC / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
        found[path.relative_to(SRC).as_posix()] = {n for n in names if n == "engram" or n.startswith("engram.")}
    assert found, f"no modules under {package}"
    return found


def offenders(package: str, allowed: tuple[str, ...] = (), forbidden: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for module, names in engram_imports(package).items():
        for name in names:
            if allowed and not any(name == a or name.startswith(a + ".") for a in allowed):
                bad.append(f"{module} imports {name}")
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{module} imports {name}")
    return sorted(bad)


def test_model_imports_only_errors_and_itself() -> None:
    assert offenders("model", allowed=("engram.model", "engram.errors")) == []


def test_store_imports_neither_the_service_nor_its_surfaces() -> None:
    assert offenders("store", forbidden=("engram.service", "engram.api", "engram.cli", "engram.retrieval")) == []


@pytest.mark.parametrize("surface", ["api", "cli"])
def test_surfaces_do_not_import_the_store(surface: str) -> None:
    assert offenders(surface, forbidden=("engram.store",)) == []


def test_the_checks_would_see_an_offending_import() -> None:
    """The walker finds imports inside functions too (the CLI imports lazily)."""
    cli = engram_imports("cli")["cli/main.py"]
    assert "engram.service" in cli and "engram.bench.recall" in cli
