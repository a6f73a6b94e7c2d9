"""memwarden as a user runs it, in its own process, for tests (loopback serving itself is
``testing.loopback``, shared with the benchmarks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from testing.loopback import wait_http

MAIN = "from memwarden.proxy.cli import main; main()"

# The running test's database (tests/conftest.py, the ``engine`` fixture): None is SQLite's file.
DATABASE_URL: list[str | None] = [None]


def engine_env() -> dict[str, str]:
    """The environment that puts a memwarden process on the running test's database engine."""
    url = DATABASE_URL[0]
    return {"MEMWARDEN_DATABASE__URL": url} if url else {}


def spawn_memwarden(
    *args: str, cwd: Path, env: dict[str, str] | None = None, code: str = MAIN
) -> subprocess.Popen[str]:
    """``memwarden`` as a user runs it, in its own process (the environment's MEMWARDEN_* dropped, the
    running test's database engine given: ``engine_env``); ``code`` is the program that runs the
    command line, for tests that prepare the process first."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")} | engine_env()
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env={**base, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_memwarden(url: str, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    def alive() -> None:
        if proc.poll() is not None:
            raise AssertionError(f"memwarden exited: {proc.stderr.read() if proc.stderr else ''}")

    try:
        wait_http(f"{url}/warden/health", timeout, alive=alive)
    except RuntimeError:
        proc.kill()  # not left running after the test
        proc.wait(timeout=30)
        raise AssertionError(f"{url} did not come up") from None
