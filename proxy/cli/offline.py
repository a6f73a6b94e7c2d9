"""The ``--data-dir`` modes: memwarden's database opened read-only, no server needed (one may be
running on it meanwhile) — the SQLite file in the data directory, or the PostgreSQL database the
settings name (``database.url``, e.g. ``MEMWARDEN_DATABASE__URL``)."""

from __future__ import annotations

from pathlib import Path

import click

from memwarden.db.common import Connection
from memwarden.proxy.cli.common import settings
from memwarden.settings import Settings


def data_dir(config: Path | None, directory: Path | None) -> Path:
    """The data directory: ``directory`` if given, else the settings' (``config``, environment)."""
    return settings(config, {"data_dir": str(directory)} if directory else {}).data_dir


def open_readonly(directory: Path, url: str | None = None) -> Connection:
    """The database in ``directory`` — or at ``url``, PostgreSQL's — read-only; a one-line error when
    there is none or it is not memwarden's."""
    from memwarden.db.common import DatabaseError
    from memwarden.db.sqlite import connect_readonly

    if url is not None:
        from memwarden.db.postgres import connect_readonly_url

        try:
            return connect_readonly_url(url)  # type: ignore[return-value]
        except DatabaseError as exc:
            raise click.ClickException(str(exc)) from None

    path = directory / "memwarden.db"
    if not path.exists():
        raise click.ClickException(f"no memwarden database in {directory} (use --data-dir, or --url for a server)")
    try:
        return connect_readonly(path)
    except DatabaseError as exc:
        raise click.ClickException(str(exc)) from None


def open_data_dir(config: Path | None, directory: Path | None) -> Connection:
    """:func:`open_readonly` on the settings' data directory (``directory`` if given) and database."""
    resolved = settings(config, {"data_dir": str(directory)} if directory else {})
    return open_readonly(resolved.data_dir, database_url(resolved))


def database_url(resolved: Settings) -> str | None:
    """The PostgreSQL URL the settings name (None: SQLite in the data directory)."""
    url = resolved.database.url
    return url.get_secret_value() if url is not None else None
