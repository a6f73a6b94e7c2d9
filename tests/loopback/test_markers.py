"""The ``slow`` marker is set by tests/conftest.py from what a test uses; checked on a real
collection, as ``pytest -m "not slow"`` (the fast loop) sees it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def collected(marker: str, *paths: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", marker, *paths],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: none collected
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_server_tests_are_slow_and_pure_ones_are_not() -> None:
    files = [
        "tests/unit/test_tags.py",
        "tests/loopback/test_passthrough_loopback.py",
        "tests/loopback/test_cli.py",
        "tests/loopback/test_local_store.py",
        "tests/interop/test_interop_governance.py",
    ]
    fast, slow = collected("not slow", *files), collected("slow", *files)
    assert fast
    assert not fast & slow
    # Pure functions, and the store in process on SQLite: kept in the fast loop (on PostgreSQL: slow).
    assert "tests/unit/test_tags.py::test_duplicates_and_empties_are_dropped_in_order" in fast
    assert "tests/loopback/test_local_store.py::test_recall_fills_the_token_budget_in_rank_order[sqlite]" in fast
    assert "tests/loopback/test_local_store.py::test_recall_fills_the_token_budget_in_rank_order[postgresql]" in slow
    # Through a fixture that serves on loopback (warden_url -> upstream_url -> serve_in_thread).
    assert "tests/loopback/test_passthrough_loopback.py::test_large_upload_is_streamed_through[aiohttp]" in slow
    # Servers started in the test's own body: uvicorn in a thread; a `memwarden serve` process.
    assert "tests/loopback/test_local_store.py::test_the_store_survives_a_restart[sqlite]" in slow
    assert "tests/loopback/test_cli.py::test_serve_with_no_configuration_is_the_self_hosted_server_on_8890" in slow
    # A process started by a helper of the test module (test_cli.run -> subprocess).
    assert "tests/loopback/test_cli.py::test_bad_environment_value_names_the_variable_key" in slow
    # The real Hindsight (interop implies slow).
    assert "tests/interop/test_interop_governance.py::test_a_duplicate_is_stored_once" in slow


def test_each_tier_folder_holds_what_it_says() -> None:
    """tests/unit and tests/inprocess start nothing but PostgreSQL (their ``postgresql`` variants:
    the engine of memwarden's state; the rest is the fast loop); every module in tests/interop
    drives the real Hindsight."""
    assert not collected("slow and not postgresql", "tests/unit", "tests/inprocess")
    assert collected("not slow", "tests/unit", "tests/inprocess")
    interop_modules = {line.split("::")[0] for line in collected("interop", "tests/interop")}
    assert interop_modules == {str(p.relative_to(REPO)) for p in (REPO / "tests" / "interop").glob("test_*.py")}
