"""One way in: the layers import only downwards. ``model`` is pure (it imports nothing of Engram but
``errors``); ``store`` knows nothing of the service or its surfaces; the surfaces (REST, CLI) reach the
database only through ``Engram``; recall's ranking stage does no I/O."""

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


# Recall's ranking stage and what it is made of: pure, unit-tested without a database (``retrieval.rank``).
# Of the other stages and the retrievers it knows only the retrievers' shared types.
RANKING = ("rank.py", "fusion.py", "conflicts.py", "retrievers/base.py")
NOT_IN_RANKING = (
    "psycopg", "psycopg_pool", "pgvector", "asyncio", "engram.store", "engram.providers", "engram.retrieval.gather",
    "engram.retrieval.answer", "engram.retrieval.engine", "engram.retrieval.retrievers.",
)  # fmt: skip


def imports_of(module: str) -> set[str]:
    """The modules a file of ``retrieval`` imports at run time (``if TYPE_CHECKING:`` blocks left out)."""
    names: set[str] = set()
    for node in ast.parse((SRC / "retrieval" / module).read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                names.add(inner.module)
            elif isinstance(inner, ast.Import):
                names.update(a.name for a in inner.names)
    return names


@pytest.mark.parametrize("module", RANKING)
def test_ranking_does_no_io(module: str) -> None:
    bad = {
        name
        for name in imports_of(module) - {"engram.retrieval.retrievers.base"}
        if any(name == f or name.startswith(f if f.endswith(".") else f + ".") for f in NOT_IN_RANKING)
    }
    assert bad == set(), f"{module} imports {sorted(bad)}"


def test_the_checks_would_see_an_offending_import() -> None:
    """The walker finds imports inside functions too (the CLI imports lazily)."""
    cli = engram_imports("cli")["cli/main.py"]
    assert "engram.service" in cli and "engram.bench.recall" in cli
    assert "engram.store.database" in imports_of("gather.py") and "psycopg" in imports_of("retrievers/columns.py")
