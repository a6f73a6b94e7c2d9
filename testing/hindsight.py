"""The real Hindsight 1.1.0 server for interop tests and benchmarks, through ``scripts/hindsight-up``
(installed on first use, ~3 min) and ``scripts/hindsight-down``.

Whoever starts it stops it: :func:`start_hindsight` says whether this call started the server, and
the caller stops it at the end only then (a server that was already running is left running).
``HINDSIGHT_URL`` points at a server someone else runs instead (never started or stopped here).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UP, DOWN = REPO / "scripts" / "hindsight-up", REPO / "scripts" / "hindsight-down"
STARTED = "hindsight-up: started"  # what scripts/hindsight-up says on stderr when it started the server


class HindsightUnavailable(RuntimeError):
    pass


def start_hindsight(timeout: float = 900) -> tuple[str, bool]:
    """The server's base URL, and whether this call started it."""
    if os.environ.get("HINDSIGHT_URL"):
        return os.environ["HINDSIGHT_URL"].rstrip("/"), False
    result = subprocess.run([str(UP)], capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        stop_hindsight()  # whatever the failed start left behind
        raise HindsightUnavailable(f"scripts/hindsight-up failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1], STARTED in result.stderr


def stop_hindsight() -> None:
    subprocess.run([str(DOWN)], capture_output=True, timeout=120, check=False)


@contextlib.contextmanager
def hindsight() -> Iterator[str]:
    """The server's URL for the block; stopped after it if it was started for it."""
    url, started = start_hindsight()
    try:
        yield url
    finally:
        if started:
            stop_hindsight()
