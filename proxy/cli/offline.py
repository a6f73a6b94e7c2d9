"""The ``--data-dir`` modes: memwarden's database opened read-only, no server needed (one may be
running on it meanwhile)."""

from __future__ import annotations

from pathlib import Path

import click

from memwarden.db.common import Connection
from memwarden.proxy.cli.common import settings


def data_dir(config: Path | None, directory: Path | None) -> Path:
    """The data directory: ``directory`` if given, else the settings' (``config``, environment)."""
    return settings(config, {"data_dir": str(directory)} if directory else {}).data_dir


def open_readonly(directory: Path) -> Connection:
    """The database in ``directory``, read-only; a one-line error when there is none or it is not
    memwarden's."""
    from memwarden.db.database import DatabaseError, connect_readonly

    path = directory / "memwarden.db"
    if not path.exists():
        raise click.ClickException(f"no memwarden database in {directory} (use --data-dir, or --url for a server)")
    try:
        return connect_readonly(path)
    except DatabaseError as exc:
        raise click.ClickException(str(exc)) from None


def open_data_dir(config: Path | None, directory: Path | None) -> Connection:
    """:func:`open_readonly` on :func:`data_dir`."""
    return open_readonly(data_dir(config, directory))
