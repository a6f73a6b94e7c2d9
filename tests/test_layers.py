"""The layers as a reader meets them: one installed name over the repository's folders, and SQL only
in ``db/`` and the self-hosted store (import-linter checks who imports whom: pyproject.toml)."""

from __future__ import annotations

import ast
from pathlib import Path

import memwarden

REPO = Path(__file__).resolve().parent.parent
LAYERS = ("policies", "db", "backends", "store", "governance", "fronts", "proxy")
SQL_CALLS = {"execute", "executemany", "executescript"}


def test_each_layer_folder_is_a_subpackage_of_the_one_installed_name() -> None:
    root = Path(memwarden.__file__).parent
    for layer in LAYERS:
        assert (root / layer).resolve() == (REPO / layer).resolve(), layer
        assert (REPO / layer / "__init__.py").is_file(), layer


def sql_calls(folder: str) -> list[str]:
    found = []
    for path in sorted((REPO / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_sql_outside_db_and_the_store() -> None:
    assert sql_calls("db"), "the scan finds the repositories' statements"  # it can see SQL at all
    for folder in ("policies", "backends", "governance", "fronts", "proxy"):
        assert sql_calls(folder) == [], folder
