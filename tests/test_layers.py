"""The layers as a reader meets them: one installed name over the repository's folders, and SQL only
in ``db/`` and the self-hosted store (import-linter checks who imports whom: pyproject.toml)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import memwarden

REPO = Path(__file__).resolve().parent.parent
LAYERS = ("policies", "db", "backends", "store", "governance", "fronts", "proxy")
SQL_CALLS = {"execute", "executemany", "executescript"}


def test_each_layer_folder_is_a_subpackage_of_the_one_installed_name() -> None:
    root = Path(memwarden.__file__).parent
    for layer in LAYERS:
        assert (root / layer).resolve() == (REPO / layer).resolve(), layer
        assert (REPO / layer / "__init__.py").is_file(), layer


def test_a_layer_has_one_import_name_in_the_tests_and_benchmarks_too() -> None:
    """The repository is on ``sys.path`` here (for ``tests``, ``testing``, ``bench``): ``import
    db.audit`` would be a second module beside ``memwarden.db.audit`` (two actor ContextVars).
    ``testing`` refuses it (``testing/one_name.py``), in every process that imports it."""
    import importlib
    import subprocess
    import sys

    from testing.one_name import SecondName

    for layer in LAYERS:
        with pytest.raises(SecondName, match=f"import memwarden.{layer}, not {layer}"):
            importlib.import_module(layer)
    assert not set(LAYERS) & set(sys.modules)
    # a benchmark's process (python -m bench.X, from the repository) gets it with its first import of testing
    code = "import bench.harness, sys\ntry:\n    import governance\nexcept ImportError as e:\n    print(e)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "import memwarden.governance, not governance: one module has one name", done.stderr


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
