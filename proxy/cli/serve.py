"""``memwarden serve``: the server."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from memwarden.proxy.cli.common import CONFIG_FILE_OPTION, settings


@click.command()
@CONFIG_FILE_OPTION
@click.option("--host", help="Address to listen on [default: 127.0.0.1].")
@click.option("--port", type=int, help="Port to listen on [default: 8890].")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Data directory [default: ./memwarden-data].")
@click.option("--upstream", help="Govern the Hindsight server at this URL (no config file needed).")
def serve(config: Path | None, host: str | None, port: int | None, data_dir: Path | None, upstream: str | None) -> None:
    """Run the memwarden server: with no backend configured, memwarden is the memory server itself
    (Hindsight's API on its own store in the data directory); with --upstream, it governs a Hindsight.

    \b
    Examples:
        memwarden serve                                      # self-hosted, 127.0.0.1:8890
        memwarden serve --upstream http://127.0.0.1:8888     # in front of Hindsight
    Point clients at http://127.0.0.1:8890.
    """
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides.setdefault("server", {})["host"] = host
    if port is not None:
        overrides.setdefault("server", {})["port"] = port
    if data_dir is not None:
        overrides["data_dir"] = str(data_dir)
    if upstream is not None:
        overrides["backend"] = "hindsight"
        overrides["backends"] = {"hindsight": {"url": upstream}}
    resolved = settings(config, overrides)

    import uvicorn

    from memwarden.db.database import Database, DatabaseError
    from memwarden.proxy.app import check_runnable, create_app
    from memwarden.proxy.logging import configure_logging
    from memwarden.settings import SettingsError

    try:
        check_runnable(resolved)
        ledger = Database.open(resolved.data_dir)  # a corrupt or unusable data directory: say so now
        if resolved.backend == "local":
            from memwarden.store.schema import STORE_MIGRATIONS

            ledger.migrate_sync(STORE_MIGRATIONS)  # the store's tables too, before serving
    except (SettingsError, DatabaseError) as exc:
        raise click.ClickException(str(exc)) from None
    configure_logging(resolved.server)
    app = create_app(resolved, ledger=ledger)
    uvicorn.run(
        app,
        host=resolved.server.host,
        port=resolved.server.port,
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        http="httptools",
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
        # SIGTERM: requests in flight get this long to finish (a governed retain cut short is settled
        # at the next start), then the lifespan stops deliveries and background work, and closes
        # the database after the last write.
        timeout_graceful_shutdown=math.ceil(resolved.server.shutdown_grace),
    )
