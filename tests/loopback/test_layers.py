"""The layers as a reader meets them: one installed name over the repository's folders, and SQL only
in ``db/`` and the self-hosted store (import-linter checks who imports whom: pyproject.toml)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import memwarden

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("policies", "wire", "db", "backends", "store", "governance", "fronts", "proxy")
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


def _module_files() -> dict[str, Path]:
    files = {}
    for layer in LAYERS:
        for path in (REPO / layer).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(("memwarden", *parts))
            files[name.removesuffix(".__init__")] = path
    for path in (REPO / "memwarden").rglob("*.py"):
        if not any(p.is_symlink() for p in path.relative_to(REPO).parents if p != Path(".")):
            parts = path.relative_to(REPO).with_suffix("").parts
            files[".".join(parts).removesuffix(".__init__")] = path
    return files


def _imported(node: ast.AST) -> Iterator[str]:
    """Every module an import in ``node`` names — at the top or deferred into a function, but not
    under ``if TYPE_CHECKING:`` (annotations only)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
            for other in child.orelse:
                yield from _imported(other)
            continue
        if isinstance(child, ast.Import):
            yield from (a.name for a in child.names)
        elif isinstance(child, ast.ImportFrom) and child.module:
            yield child.module
            yield from (f"{child.module}.{a.name}" for a in child.names)
        yield from _imported(child)


def test_no_import_cycles_not_even_deferred_ones() -> None:
    """A cycle broken by an import deferred into a function is still a cycle: the layers and the
    modules within them import one way."""
    files = _module_files()
    graph = {
        name: {m for m in _imported(ast.parse(path.read_text(encoding="utf-8"))) if m in files and m != name}
        for name, path in files.items()
    }
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str], done: set[str]) -> None:
        if node in trail:
            cycles.append([*trail[trail.index(node) :], node])
            return
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*trail, node], done)
        done.add(node)

    finished: set[str] = set()
    for name in sorted(graph):
        visit(name, [], finished)
    assert cycles == []
    assert len(graph) > 200  # every module was read


def sql_calls(folder: str) -> list[str]:
    found = []
    for path in sorted((REPO / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_sql_outside_db_and_the_store() -> None:
    assert sql_calls("db"), "the scan finds the repositories' statements"  # it can see SQL at all
    for folder in ("policies", "wire", "backends", "governance", "fronts", "proxy"):
        assert sql_calls(folder) == [], folder


def _row_returning(path: Path) -> set[str]:
    """The functions of a ``db/`` module that return rows: annotated so — and every one that returns
    a cursor's rows as they come (``return db.execute(…).fetchall()``) must say so."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        said = node.returns is not None and "Row" in ast.unparse(node.returns)
        raw = any(
            isinstance(r, ast.Return)
            and isinstance(r.value, ast.Call)
            and isinstance(r.value.func, ast.Attribute)
            and r.value.func.attr in ("fetchall", "fetchone", "execute")
            for r in ast.walk(node)
        )
        assert said or not raw, f"{path.name}: {node.name} returns rows without saying so"
        if said:
            found.add(node.name)
    return found


def test_no_row_above_db() -> None:
    """The layers above ``db/`` receive records (``db/records.py``) or plain values: none names a
    row type, none calls a repository function that returns rows (those stay inside ``db/``)."""
    returning = set().union(*(_row_returning(p) for p in (REPO / "db").glob("*.py")))
    assert "all_event_rows" in returning  # the scan sees them: the chain's check reads rows, inside db/
    for folder in ("policies", "wire", "backends", "governance", "fronts", "proxy"):
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
            assert not names & (returning | {"Row"}), (
                f"{path.relative_to(REPO)}: {sorted(names & (returning | {'Row'}))}"
            )


def test_governance_services_say_what_they_need() -> None:
    """Each governance service is given the pieces it uses (ledger, backend, settings, locks …)
    when the app is composed: none reaches for the app's whole state (``governance/state.py``,
    the composition, is the one module that knows them all)."""
    seen = 0
    for path in sorted((REPO / "governance").glob("*.py")):
        if path.name == "state.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = set(_imported(tree))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert "memwarden.governance.state" not in imported, f"{path.relative_to(REPO)} imports the app's state"
        assert "AppState" not in names, f"{path.relative_to(REPO)} names AppState"
        seen += path.name in ("retain.py", "outbox.py", "plans.py")
    assert seen == 3  # the scan reads the services
