"""The servers a test session starts for the tests that need them (the real Hindsight, PostgreSQL),
started once and stopped at the end only if the session started them — also when the tests run in
parallel (pytest-xdist), where each worker process has its own session fixtures:

- the first worker that needs a server starts it under a file lock and leaves its URL in the run's
  folder; the others wait for the lock, then read the URL (they never run the start script: on a
  loaded machine its "is it up?" probe could time out and start it again under the first);
- no worker stops it (another may still be using it): the worker that started it leaves a note in
  the run's folder, and the controlling process stops it at the end of the whole run.

Without xdist the one process starts and stops it, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

RUN_ENV = "PYTEST_MEMWARDEN_RUN"  # the run's folder of notes, for its workers (not MEMWARDEN_*: settings)


def begin_run(config: pytest.Config) -> None:
    """In the controlling process (``pytest_configure``): a folder for the run's notes, which the
    workers it starts inherit in their environment."""
    if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(RUN_ENV):
        return
    folder = Path(tempfile.gettempdir()) / f"memwarden-test-run-{uuid.uuid4().hex[:12]}"
    folder.mkdir(mode=0o700)
    os.environ[RUN_ENV] = str(folder)
    config.stash[_FOLDER] = folder


def end_run(config: pytest.Config, stops: dict[str, Callable[[], None]]) -> None:
    """In the controlling process (``pytest_unconfigure``): stop each server a worker started."""
    folder = config.stash.get(_FOLDER, None)
    if folder is None:
        return
    for name, stop in stops.items():
        if (folder / name).exists():
            stop()
    for note in folder.iterdir():
        note.unlink()
    folder.rmdir()
    os.environ.pop(RUN_ENV, None)


_FOLDER = pytest.StashKey[Path]()


@contextlib.contextmanager
def shared_server(name: str, start: Callable[[], tuple[str, bool]], stop: Callable[[], None]) -> Iterator[str]:
    """The server ``name``'s URL for the session: ``start`` says whether it started it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = os.environ.get(RUN_ENV)
    if not worker:
        url, started = start()
        try:
            yield url
        finally:
            if started:
                stop()
        return
    if not folder:  # a worker of a run that did not load tests/conftest.py first: never stops it
        yield start()[0]
        return
    notes = Path(folder)
    with (notes / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker starts it; the others wait, then read its URL
        try:
            known = notes / f"{name}.url"
            if known.exists():
                url = known.read_text()
            else:
                url, started = start()
                if started:
                    (notes / name).touch()  # the controlling process stops it when every worker is done
                known.write_text(url)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    yield url
